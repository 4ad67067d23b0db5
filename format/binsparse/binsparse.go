// Package binsparse reads and writes Binsparse files: sparse and dense arrays described by a
// JSON descriptor and stored as named binary arrays in a container (HDF5 or NPZ).
//
// The package models the whole Binsparse specification, version 0.1: every predefined format
// (DVEC, DMATR, DMATC, DMAT, CVEC, CSR, CSC, DCSR, DCSC, COOR, COOC, COO), custom level formats
// with transpose, the data types (including bint8, iso[...] and complex[...]), fill values,
// structures (symmetric, hermitian, skew-symmetric; lower and upper) and user keys. See
// [Descriptor], [Matrix] and [Matrix.Validate].
//
// A [Matrix] holds a format's arrays in memory and converts between formats ([Matrix.Convert]).
// [ReadFile] and [WriteFile] move matrices to and from files; [Open] and [NewWriter] bridge to
// mlfeed's data model, where each row of a matrix is a sequence of one sample (sparse for the
// sparse formats, dense for the dense ones), so that every mlfeed tool works on Binsparse files.
//
// Containers: HDF5 (".bsp.h5", ".h5", ".hdf5", ".nc") through libhdf5, which needs cgo and the
// build tag "hdf5" (without it, HDF5 files are refused with an error wrapping
// mlfeed.ErrUnsupported), and NPZ (".bsp.npz"), which is pure Go. A file may hold several
// matrices in groups, addressed as "file.bsp.h5:/group/name".
//
// The package registers the format "binsparse" with package format.
package binsparse

import (
	"fmt"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Errors. Each wraps the mlfeed sentinel of the same name.
var (
	// ErrFormat means a descriptor or an array violates the specification.
	ErrFormat = fmt.Errorf("binsparse: %w", mlfeed.ErrFormat)
	// ErrUnsupported means a valid file uses something mlfeed does not implement, or HDF5
	// support is not compiled in.
	ErrUnsupported = fmt.Errorf("binsparse: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge means an array is larger than its file can hold or a limit allows.
	ErrTooLarge = fmt.Errorf("binsparse: %w", mlfeed.ErrTooLarge)
)

// Version is the specification version this package writes.
const Version = "0.1"

// Format is a predefined Binsparse format name, or Custom.
type Format string

// The predefined formats. DMAT and COO are aliases of DMATR and COOR; parsing a descriptor
// normalizes them.
const (
	DVEC   Format = "DVEC"   // dense vector: values
	DMATR  Format = "DMATR"  // dense row-major matrix: values
	DMATC  Format = "DMATC"  // dense column-major matrix: values
	DMAT   Format = "DMAT"   // alias of DMATR
	CVEC   Format = "CVEC"   // sparse vector: indices_0, values
	CSR    Format = "CSR"    // compressed sparse rows: pointers_to_1, indices_1, values
	CSC    Format = "CSC"    // compressed sparse columns: pointers_to_1, indices_1, values
	DCSR   Format = "DCSR"   // doubly compressed rows: indices_0, pointers_to_1, indices_1, values
	DCSC   Format = "DCSC"   // doubly compressed columns
	COOR   Format = "COOR"   // coordinates sorted by row: indices_0 (rows), indices_1, values
	COOC   Format = "COOC"   // coordinates sorted by column: indices_0 (columns), indices_1, values
	COO    Format = "COO"    // alias of COOR
	Custom Format = "custom" // described by Descriptor.Custom
)

// canonical returns the format an alias stands for.
func (f Format) canonical() Format {
	switch f {
	case DMAT:
		return DMATR
	case COO:
		return COOR
	}
	return f
}

// parseFormat maps a descriptor's format string to a Format; ok is false for unknown names.
func parseFormat(s string) (Format, bool) {
	switch f := Format(s); f {
	case DVEC, DMATR, DMATC, DMAT, CVEC, CSR, CSC, DCSR, DCSC, COOR, COOC, COO:
		return f.canonical(), true
	case Custom:
		return f, true
	}
	return "", false
}

// Structure is a matrix's declared structure: which triangle is stored and how the other is
// derived. The zero value is General.
type Structure string

// The structures of the specification.
const (
	General            Structure = ""
	SymmetricLower     Structure = "symmetric_lower"
	SymmetricUpper     Structure = "symmetric_upper"
	HermitianLower     Structure = "hermitian_lower"
	HermitianUpper     Structure = "hermitian_upper"
	SkewSymmetricLower Structure = "skew_symmetric_lower"
	SkewSymmetricUpper Structure = "skew_symmetric_upper"
)

func parseStructure(s string) (Structure, bool) {
	switch st := Structure(s); st {
	case SymmetricLower, SymmetricUpper, HermitianLower, HermitianUpper, SkewSymmetricLower, SkewSymmetricUpper:
		return st, true
	case "general":
		return General, true
	}
	return "", false
}

// Lower reports whether the structure stores the lower triangle (row >= column).
func (s Structure) Lower() bool { return strings.HasSuffix(string(s), "_lower") }

// DataType is the type of one of a descriptor's arrays: an element type, possibly marked iso
// (one stored value stands for all). Type is mlfeed.Bool for "bint8" and mlfeed.Complex64 or
// mlfeed.Complex128 for "complex[float32]" and "complex[float64]".
type DataType struct {
	Type mlfeed.ElemType // the element type
	Iso  bool            // one stored value stands for every entry
}

var scalarNames = map[string]mlfeed.ElemType{
	"uint8": mlfeed.Uint8, "uint16": mlfeed.Uint16, "uint32": mlfeed.Uint32, "uint64": mlfeed.Uint64,
	"int8": mlfeed.Int8, "int16": mlfeed.Int16, "int32": mlfeed.Int32, "int64": mlfeed.Int64,
	"float32": mlfeed.Float32, "float64": mlfeed.Float64, "bint8": mlfeed.Bool,
}

// ParseDataType parses a data type string such as "int64", "bint8", "complex[float32]" or
// "iso[complex[float64]]".
func ParseDataType(s string) (DataType, error) {
	var t DataType
	in := s
	if inner, ok := unwrapType(s, "iso"); ok {
		t.Iso, s = true, inner
	}
	if inner, ok := unwrapType(s, "complex"); ok {
		switch inner {
		case "float32":
			t.Type = mlfeed.Complex64
		case "float64":
			t.Type = mlfeed.Complex128
		default:
			return t, fmt.Errorf("%w: data type %q: complex needs float32 or float64", ErrFormat, in)
		}
		return t, nil
	}
	e, ok := scalarNames[s]
	if !ok {
		return t, fmt.Errorf("%w: unknown data type %q", ErrFormat, in)
	}
	t.Type = e
	return t, nil
}

func unwrapType(s, mod string) (string, bool) {
	if strings.HasPrefix(s, mod+"[") && strings.HasSuffix(s, "]") {
		return s[len(mod)+1 : len(s)-1], true
	}
	return s, false
}

// String returns the type as a descriptor writes it.
func (t DataType) String() string {
	var s string
	switch t.Type {
	case mlfeed.Complex64:
		s = "complex[float32]"
	case mlfeed.Complex128:
		s = "complex[float64]"
	case mlfeed.Bool:
		s = "bint8"
	default:
		s = t.Type.String()
	}
	if t.Iso {
		s = "iso[" + s + "]"
	}
	return s
}

// storage returns the element type and the number of stored elements per value: complex
// values are stored as pairs of floats.
func storage(t mlfeed.ElemType) (mlfeed.ElemType, int) {
	switch t {
	case mlfeed.Complex64:
		return mlfeed.Float32, 2
	case mlfeed.Complex128:
		return mlfeed.Float64, 2
	}
	return t, 1
}

// validValueType reports whether t can be a Binsparse value type.
func validValueType(t mlfeed.ElemType) bool {
	switch t {
	case mlfeed.Complex64, mlfeed.Complex128, mlfeed.Bool:
		return true
	}
	return t.IsInteger() || t.IsFloat()
}

// ArrayError is a violation in one array of a matrix: the file (and group), the array's name,
// the element position, and what is wrong. It wraps ErrFormat.
type ArrayError struct {
	File  string // file name (with ":/group" when the matrix is in a group), if known
	Array string // array name, such as "indices_1"
	Index int64  // element position in the array, or -1 when the array as a whole is wrong
	Err   error  // what is wrong; wraps ErrFormat (or ErrTooLarge)
}

// Error formats the error as "file: array[index]: message".
func (e *ArrayError) Error() string {
	name := e.File
	if name == "" {
		name = "<matrix>"
	}
	if e.Index >= 0 {
		return fmt.Sprintf("%s: %s[%d]: %v", name, e.Array, e.Index, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", name, e.Array, e.Err)
}

// Unwrap returns the underlying error.
func (e *ArrayError) Unwrap() error { return e.Err }

func arrayErr(array string, index int64, format string, args ...any) *ArrayError {
	return &ArrayError{Array: array, Index: index, Err: fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)}
}
