// Package mtx reads and writes Matrix Market files (".mtx", ".mtx.gz"): the coordinate and
// array formats with real, integer, complex and pattern values and general, symmetric,
// skew-symmetric and hermitian symmetry.
//
// A file is read into a binsparse.Matrix, the way the Binsparse C reference's mtx2bsp reads
// it: coordinate files become COOR (sorted by row, then column), array files DMATC (Matrix
// Market stores arrays column by column); real values are float64, integer values int64,
// complex values complex128, and pattern files have the iso value 1 of type bint8; indices
// get the smallest unsigned type that holds the larger dimension; symmetric, skew-symmetric and
// hermitian files keep their stored lower triangle and get the structure symmetric_lower,
// skew_symmetric_lower or hermitian_lower. The comment lines are kept in the user key
// "comment".
//
// The package registers the format "mtx" with package format; through package binsparse's
// Source, each matrix row is a sequence of one sparse sample (dense for array files).
package mtx

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Errors. Each wraps the mlfeed sentinel of the same name.
var (
	// ErrFormat means the file is not valid Matrix Market.
	ErrFormat = fmt.Errorf("mtx: %w", mlfeed.ErrFormat)
	// ErrTruncated means the file ends before its size line's count of entries.
	ErrTruncated = fmt.Errorf("mtx: %w", mlfeed.ErrTruncated)
	// ErrUnsupported means a valid header asks for something this package does not read
	// (objects other than matrix) or a matrix Matrix Market cannot hold.
	ErrUnsupported = fmt.Errorf("mtx: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge means the size line claims more entries than the file can hold.
	ErrTooLarge = fmt.Errorf("mtx: %w", mlfeed.ErrTooLarge)
	// ErrRange means a real value is beyond float64's range (it would read as ±Inf) or a
	// nonzero value below it (it would read as 0): reading never changes a stated value.
	ErrRange = fmt.Errorf("mtx: %w", mlfeed.ErrRange)
)

// Header is a Matrix Market banner and size line.
type Header struct {
	Format   string   // "coordinate" or "array"
	Field    string   // "real", "integer", "complex" or "pattern"
	Symmetry string   // "general", "symmetric", "skew-symmetric" or "hermitian"
	Comments []string // comment lines after the banner, with their leading '%'
	Rows     int64    // number of rows
	Cols     int64    // number of columns
	Entries  int64    // stored entries (coordinate), or the number of values listed (array)
	// Vector marks a one-dimensional coordinate file, as Finch writes one (a size line of
	// "length entries", entries of "index [value]"); Rows is its length and Cols is 1. It
	// reads as a sparse vector (binsparse CVEC), one sequence of one sample.
	Vector bool
}

const banner = "%%MatrixMarket"
