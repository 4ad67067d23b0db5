// Package h5 is the HDF5 container layer of package binsparse: one-dimensional datasets and
// string attributes in groups, read and written in pure Go through internal/hdf5 (no cgo, no
// libhdf5).
package h5

import "github.com/mlfeed/mlfeed"

// Info describes a one-dimensional dataset.
type Info struct {
	Type    mlfeed.ElemType // the element type
	Len     int64           // number of elements
	Rank    int             // number of dimensions of the dataspace
	Layout  string          // "contiguous", "chunked", "compact"
	Chunk   int64           // chunk length (chunked layout, first dimension)
	Filters []string        // "deflate", "shuffle", "fletcher32"
}

// WriteOptions control how Write stores a dataset.
type WriteOptions struct {
	Chunk   int64 // chunk length in elements; 0 stores the dataset contiguous
	Level   int   // deflate level 1-9; 0 means no compression
	Shuffle bool  // add the shuffle filter before deflate
}
