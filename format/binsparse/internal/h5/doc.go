// Package h5 is the HDF5 container layer of package binsparse: one-dimensional datasets and
// string attributes in groups, through libhdf5. It is compiled only with cgo and the build
// tag "hdf5"; other builds get a stub whose every operation returns an error wrapping
// mlfeed.ErrUnsupported that says how to enable HDF5.
package h5
