// Package all registers every format mlfeed has with package format. Import it for its side
// effect when a program should read and write them all, as the mlfeed command does:
//
//	import _ "github.com/mlfeed/mlfeed/format/all"
package all

import (
	_ "github.com/mlfeed/mlfeed/format/arrow"      // Apache Arrow IPC files and streams (Feather v2)
	_ "github.com/mlfeed/mlfeed/format/binsparse"  // Binsparse (.bsp.h5, .bsp.npz)
	_ "github.com/mlfeed/mlfeed/format/cbf"        // CNTK Binary Format
	_ "github.com/mlfeed/mlfeed/format/ctf"        // CNTK Text Format
	_ "github.com/mlfeed/mlfeed/format/hdf5"       // HDF5 data sets (X, y)
	_ "github.com/mlfeed/mlfeed/format/idv"        // ML.NET binary dataview
	_ "github.com/mlfeed/mlfeed/format/idx"        // IDX (MNIST)
	_ "github.com/mlfeed/mlfeed/format/libsvm"     // LIBSVM / svmlight text
	_ "github.com/mlfeed/mlfeed/format/mds"        // MosaicML Streaming MDS directories
	_ "github.com/mlfeed/mlfeed/format/mtx"        // Matrix Market
	_ "github.com/mlfeed/mlfeed/format/npy"        // NumPy .npy and .npz
	_ "github.com/mlfeed/mlfeed/format/parquet"    // Apache Parquet
	_ "github.com/mlfeed/mlfeed/format/tfrecord"   // TensorFlow TFRecord (tf.train.Example)
	_ "github.com/mlfeed/mlfeed/format/webdataset" // WebDataset tar shards (.tar, .tar.gz)
)
