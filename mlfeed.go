// Package mlfeed is the data model shared by every mlfeed format package and by the minibatch
// engine.
//
// A data set is a set of streams (see [Stream]) and a sequence of training examples. One
// example is a sequence: for each stream, zero or more samples. A plain table row (an IDX
// record, an IDV row, a matrix row) is a sequence of one sample. Sequences are delivered in
// chunks (see [Chunk]) that hold the values of many sequences in flat, columnar buffers per
// stream, so that no reader allocates per sample on its hot path.
//
// A format reader is a [Source]: it describes its schema and its chunk table up front, without
// decoding data, and decodes one chunk on request. A format writer is a [Sink]: it takes chunks
// and commits the file when closed. Everything that moves data between formats (package
// convert) or feeds training code (package minibatch) only knows these two interfaces.
//
// Values keep the element type they are stored in (uint8 pixels stay uint8); consumers convert
// where they need to, with [Buffer.Float32s], [Buffer.Float64At], or [ConvertBuffer].
package mlfeed

import (
	"fmt"
	"strings"
)

// ElemType is the type of one element (value) of a stream.
//
// Besides the usual numeric types it covers what the supported formats hold: Bool and String
// (IDV columns), Complex64 and Complex128 (Binsparse complex values), and the IDV time and id
// types Duration, DateTime, DateTimeOffset and RowID, which no other format can hold.
type ElemType uint8

// The element types. The zero value is Invalid.
const (
	Invalid    ElemType = iota
	Float32             // IEEE-754 binary32
	Float64             // IEEE-754 binary64
	Int8                // signed 8-bit integer
	Int16               // signed 16-bit integer
	Int32               // signed 32-bit integer
	Int64               // signed 64-bit integer
	Uint8               // unsigned 8-bit integer
	Uint16              // unsigned 16-bit integer
	Uint32              // unsigned 32-bit integer
	Uint64              // unsigned 64-bit integer
	Bool                // one byte per value: 0 false, 1 true
	String              // UTF-8 text, held in Buffer.Strings
	Complex64           // two float32: real, imaginary
	Complex128          // two float64: real, imaginary
	// Duration is a time span in 100-nanosecond ticks, stored as int64 (IDV TimeSpan).
	Duration
	// DateTime is a date and time in 100-nanosecond ticks since 0001-01-01T00:00:00, stored as
	// int64 (IDV DateTime).
	DateTime
	// DateTimeOffset is a local clock time in ticks (int64) followed by its UTC offset in
	// minutes (int16) and 6 bytes of padding: 16 bytes per value (IDV DateTimeOffset).
	DateTimeOffset
	// RowID is a 128-bit row identifier stored as two uint64: low, then high (IDV DataViewRowId).
	RowID
	// Bytes is an opaque byte string (an encoded image, audio, a serialized record), held like
	// String in Buffer.Strings but never read as text: base64 in JSON, bytes in Python.
	Bytes
	numElemTypes
)

// The range of DateTime, and where other formats' times count from.
const (
	// EpochTicks is the DateTime of 1970-01-01T00:00:00, where Unix time, numpy's datetime64
	// and Arrow's and Parquet's timestamps count from.
	EpochTicks = 621355968000000000
	// MaxTicks is the largest DateTime: 9999-12-31T23:59:59.9999999.
	MaxTicks = 3155378975999999999
)

var elemNames = [numElemTypes]string{
	Invalid: "invalid", Float32: "float32", Float64: "float64",
	Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Bool: "bool", String: "string", Complex64: "complex64", Complex128: "complex128",
	Duration: "duration", DateTime: "datetime", DateTimeOffset: "datetimeoffset", RowID: "rowid",
	Bytes: "bytes",
}

var elemSizes = [numElemTypes]int{
	Float32: 4, Float64: 8, Int8: 1, Int16: 2, Int32: 4, Int64: 8,
	Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8, Bool: 1, String: 0,
	Complex64: 8, Complex128: 16, Duration: 8, DateTime: 8, DateTimeOffset: 16, RowID: 16,
	Bytes: 0,
}

// String returns the type's name as used in `mlfeed info --json`: "float32", "uint8", ...
func (t ElemType) String() string {
	if t < numElemTypes {
		return elemNames[t]
	}
	return fmt.Sprintf("ElemType(%d)", uint8(t))
}

// Size returns the number of bytes one element occupies in a Buffer, or 0 for String, Bytes
// and Invalid.
func (t ElemType) Size() int {
	if t < numElemTypes {
		return elemSizes[t]
	}
	return 0
}

// IsVarLen reports whether t's values have their own lengths and are held in Buffer.Strings
// (String and Bytes) rather than as fixed-width elements in Buffer.Bytes.
func (t ElemType) IsVarLen() bool { return t == String || t == Bytes }

// IsInteger reports whether t is a signed or unsigned integer type.
func (t ElemType) IsInteger() bool { return t >= Int8 && t <= Uint64 }

// IsSigned reports whether t is a signed integer type.
func (t ElemType) IsSigned() bool { return t >= Int8 && t <= Int64 }

// IsFloat reports whether t is Float32 or Float64.
func (t ElemType) IsFloat() bool { return t == Float32 || t == Float64 }

// IsNumeric reports whether t is an integer, float or bool type: a type whose values convert
// to float64 (Bool as 0 or 1).
func (t ElemType) IsNumeric() bool { return t.IsInteger() || t.IsFloat() || t == Bool }

// ParseElemType parses a type name as printed by ElemType.String. It also accepts the common
// aliases "float" (float32), "double" (float64), "byte"/"ubyte" (uint8) and "int" (int32).
func ParseElemType(s string) (ElemType, error) {
	switch strings.ToLower(s) {
	case "float":
		return Float32, nil
	case "double":
		return Float64, nil
	case "byte", "ubyte":
		return Uint8, nil
	case "int":
		return Int32, nil
	}
	for t := Float32; t < numElemTypes; t++ {
		if elemNames[t] == strings.ToLower(s) {
			return t, nil
		}
	}
	return Invalid, fmt.Errorf("mlfeed: unknown element type %q", s)
}

// Storage says how a stream's samples are stored.
type Storage uint8

const (
	// Dense samples store every value.
	Dense Storage = iota
	// Sparse samples store (index, value) pairs; indices are below the stream's Dim.
	Sparse
)

// String returns "dense" or "sparse".
func (s Storage) String() string {
	if s == Sparse {
		return "sparse"
	}
	return "dense"
}
