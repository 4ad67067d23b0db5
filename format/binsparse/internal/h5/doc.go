// Package h5 is the HDF5 container layer of package binsparse: one-dimensional datasets and
// string attributes in groups, through libhdf5. It is compiled only with cgo and the build
// tag "hdf5"; other builds get a stub whose every operation returns an error wrapping
// mlfeed.ErrUnsupported that says how to enable HDF5.
package h5

import "github.com/mlfeed/mlfeed"

// Info describes a one-dimensional dataset.
type Info struct {
	Type    mlfeed.ElemType // the element type, or Invalid when it is not an integer or float
	Len     int64           // number of elements
	Rank    int             // number of dimensions of the dataspace
	Layout  string          // "contiguous", "chunked", "compact"
	Chunk   int64           // chunk length (chunked layout)
	Filters []string        // "deflate", "shuffle", "fletcher32", "szip", or numbers
}

// WriteOptions control how Write stores a dataset.
type WriteOptions struct {
	Chunk   int64 // chunk length in elements; 0 stores the dataset contiguous
	Level   int   // deflate level 1-9; 0 means no compression
	Shuffle bool  // add the shuffle filter before deflate
}
