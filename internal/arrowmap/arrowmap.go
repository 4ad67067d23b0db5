// Package arrowmap maps mlfeed's data model to Apache Arrow and back, for the Arrow IPC
// (format/arrow) and Parquet (format/parquet) packages, which both go through arrow-go.
//
// A stream is a column and a sequence is a row. The column's Arrow type follows the stream:
//
//	dense, Dim 1, no Shape        T                      (a primitive column)
//	dense, fixed Dim or Shape     FixedSizeList<T>[Dim]  (rank > 1: arrow.fixed_shape_tensor)
//	dense, variable (Dim 0)       List<T>
//	sparse                        Struct<indices: List<Int32>, values: List<T>>
//	sequences of several samples  List<sample type> around any of the above
//
// T is the Arrow type of the element type (Float32 -> Float32, Bool -> Boolean, String ->
// Utf8, Bytes -> Binary, ...); the IDV time and id types and complex numbers, which Arrow has no exact
// counterpart for, are Int64 (Duration, DateTime) or FixedSizeBinary with their mlfeed type
// in the field metadata. Everything else mlfeed knows about a stream (storage, dim, shape,
// alias, key count, IDV metadata) is kept in the field's metadata under "mlfeed." keys, so
// that mlfeed -> Arrow -> mlfeed is lossless; files from other writers have none of those
// keys and are read by their Arrow types alone (see Plan). Their dates and timestamps (any
// unit, any time zone: the instant's UTC time, or the wall-clock time of one without a zone)
// read as DateTime, their times of day and durations as Duration, converted to ticks of
// 100 ns; a value the ticks cannot hold exactly (a nanosecond remainder, a year outside
// 1-9999) is refused.
package arrowmap

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mlfeed/mlfeed"
)

// Field metadata keys mlfeed writes on each column.
const (
	KeyStorage  = "mlfeed.storage"         // "dense" or "sparse"
	KeyType     = "mlfeed.type"            // the element type, when the Arrow type does not say it
	KeyDim      = "mlfeed.dim"             // Dim, decimal
	KeyShape    = "mlfeed.shape"           // Shape, comma-separated, when set
	KeyAlias    = "mlfeed.alias"           // Alias, when set
	KeyKeyCount = "mlfeed.key_count"       // KeyCount, when non-zero
	KeyDefines  = "mlfeed.defines_mb_size" // "true" when the stream defines minibatch sizes
	KeySequence = "mlfeed.sequence"        // "list": the column is a list of samples per row
	KeyMetadata = "mlfeed.metadata"        // the stream's annotations, as JSON
	KeyRole     = "mlfeed.role"            // "id": the column holds sequence ids

	// ExtName and ExtMeta are Arrow's keys for extension types; mlfeed writes
	// arrow.fixed_shape_tensor on FixedSizeList columns of rank > 1 samples.
	ExtName = "ARROW:extension:name"
	ExtMeta = "ARROW:extension:metadata"
	// TensorExt is the canonical fixed-shape tensor extension's name.
	TensorExt = "arrow.fixed_shape_tensor"
)

// Readable says, in an error about a column mlfeed cannot hold, what it reads and how to read
// a file's other columns.
const Readable = "mlfeed reads integers, floats, booleans, text, bytes, dates, times and durations; the option columns=NAME,... reads the others"

// Sentinel errors, without a package name in their text: format/arrow and format/parquet give
// the errors of the mapping their own sentinel and prefix (see Wrap).
var (
	// ErrFormat is wrapped for data that does not follow the mapping (offsets out of range,
	// unequal list lengths, malformed metadata).
	ErrFormat = fmt.Errorf("%w", mlfeed.ErrFormat)
	// ErrUnsupported is wrapped for Arrow types and features mlfeed cannot hold (nulls,
	// decimals, maps, unions, ...).
	ErrUnsupported = fmt.Errorf("%w", mlfeed.ErrUnsupported)
)

// pkgError is an error of the mapping as a format package reports it: with the package's
// name in front and its sentinel in the chain.
type pkgError struct {
	prefix   string
	sentinel error
	err      error
}

func (e *pkgError) Error() string   { return e.prefix + ": " + e.err.Error() }
func (e *pkgError) Unwrap() []error { return []error{e.sentinel, e.err} }

// Wrap gives err, if it comes from this package, the format package's name and sentinel:
// formatErr for ErrFormat, unsupported for ErrUnsupported. Other errors pass unchanged.
func Wrap(err error, prefix string, formatErr, unsupported error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnsupported):
		return &pkgError{prefix, unsupported, err}
	case errors.Is(err, ErrFormat):
		return &pkgError{prefix, formatErr, err}
	}
	return err
}

// arrowType returns the Arrow type that holds elements of type t, and whether the element
// type must be recorded in the metadata (KeyType) to be read back.
func arrowType(t mlfeed.ElemType) (arrow.DataType, bool) {
	switch t {
	case mlfeed.Float32:
		return arrow.PrimitiveTypes.Float32, false
	case mlfeed.Float64:
		return arrow.PrimitiveTypes.Float64, false
	case mlfeed.Int8:
		return arrow.PrimitiveTypes.Int8, false
	case mlfeed.Int16:
		return arrow.PrimitiveTypes.Int16, false
	case mlfeed.Int32:
		return arrow.PrimitiveTypes.Int32, false
	case mlfeed.Int64:
		return arrow.PrimitiveTypes.Int64, false
	case mlfeed.Uint8:
		return arrow.PrimitiveTypes.Uint8, false
	case mlfeed.Uint16:
		return arrow.PrimitiveTypes.Uint16, false
	case mlfeed.Uint32:
		return arrow.PrimitiveTypes.Uint32, false
	case mlfeed.Uint64:
		return arrow.PrimitiveTypes.Uint64, false
	case mlfeed.Bool:
		return arrow.FixedWidthTypes.Boolean, false
	case mlfeed.String:
		return arrow.BinaryTypes.String, false
	case mlfeed.Bytes:
		return arrow.BinaryTypes.Binary, false
	case mlfeed.Duration, mlfeed.DateTime:
		return arrow.PrimitiveTypes.Int64, true
	case mlfeed.Complex64, mlfeed.Complex128, mlfeed.DateTimeOffset, mlfeed.RowID:
		return &arrow.FixedSizeBinaryType{ByteWidth: t.Size()}, true
	}
	return nil, false
}

// elemType returns the mlfeed element type of an Arrow leaf type, or Invalid.
func elemType(dt arrow.DataType) mlfeed.ElemType {
	switch dt.ID() {
	case arrow.FLOAT32:
		return mlfeed.Float32
	case arrow.FLOAT64:
		return mlfeed.Float64
	case arrow.FLOAT16:
		return mlfeed.Float32 // widened as read: every float16 is a float32
	case arrow.INT8:
		return mlfeed.Int8
	case arrow.INT16:
		return mlfeed.Int16
	case arrow.INT32:
		return mlfeed.Int32
	case arrow.INT64:
		return mlfeed.Int64
	case arrow.UINT8:
		return mlfeed.Uint8
	case arrow.UINT16:
		return mlfeed.Uint16
	case arrow.UINT32:
		return mlfeed.Uint32
	case arrow.UINT64:
		return mlfeed.Uint64
	case arrow.BOOL:
		return mlfeed.Bool
	case arrow.STRING, arrow.LARGE_STRING:
		return mlfeed.String
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		// FixedSizeBinary with mlfeed's type in the metadata (KeyType) holds fixed-size
		// values (complex numbers, IDV's time types); without it, byte strings of one length.
		return mlfeed.Bytes
	case arrow.DICTIONARY:
		return elemType(dt.(*arrow.DictionaryType).ValueType)
	}
	if _, _, t, ok := temporal(dt); ok {
		return t // converted to ticks as read (see Decoder)
	}
	return mlfeed.Invalid
}
