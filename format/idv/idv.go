// Package idv reads and writes ML.NET's binary dataview format (.idv), the files written by
// ML.NET's BinarySaver (MLContext.Data.SaveAsBinary) and read by its BinaryLoader.
//
// An IDV file is a table: a header, data blocks (each holding a run of rows of one column,
// raw or DEFLATE-compressed), a lookup table per column, per-column metadata, a column table
// of contents and a tail signature. Every column shares one rows-per-block value, so block k
// of every column covers the same rows.
//
// # Mapping to the mlfeed data model
//
// Each column is a stream and each row a sequence of one sample. Scalars are dense streams of
// Dim 1. Fixed-size vectors have Dim = the product of their dimensions and Shape = the
// dimensions when there is more than one (or when the single dimension is 1, so that a vector
// of one slot stays distinct from a scalar). Variable-size vectors are dense streams of Dim 0
// whose samples are delimited by StreamData.SampleStart; a sparse row of such a column is
// expanded to its dense form.
//
// A fixed-size vector column is a Sparse stream when any of its rows is stored sparsely (see
// ReaderOptions.Vectors), else a Dense one. In a Sparse stream a row that IDV stores densely
// lists every slot (indices 0..Dim-1), which IDV never stores sparsely (a sparse row has fewer
// entries than slots), so the writer stores a sample densely exactly when it lists Dim
// entries: IDV -> mlfeed -> IDV keeps every row's dense or sparse form.
//
// Key columns become unsigned streams with Stream.KeyCount set (raw 0 is missing). Text
// becomes mlfeed.String, Boolean mlfeed.Bool, TimeSpan mlfeed.Duration, DateTime
// mlfeed.DateTime, DateTimeOffset mlfeed.DateTimeOffset and DataViewRowId mlfeed.RowID.
// Column metadata (SlotNames, KeyValues, IsNormalized, ...) becomes Stream.Metadata, in file
// order. Legacy missing-value markers of files written before 2018 read as current ML.NET
// reads them: signed integer NA as the minimum value, text NA as "", DvBool NA as false, time
// NA as 0.
//
// A column whose name repeats a later column's (a hidden column in ML.NET) keeps its file
// name as Stream.Alias and gets the Name "name#index"; the writer gives such a stream its
// alias back as column name, so the file's column names round-trip. Other streams are
// written under their Name.
package idv

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Errors returned by the reader and writer. Positional errors are *mlfeed.PosError values
// that wrap one of these.
var (
	// ErrFormat means the data is not a valid IDV stream.
	ErrFormat = fmt.Errorf("idv: %w", mlfeed.ErrFormat)
	// ErrTruncated means a region the file points at lies beyond its end.
	ErrTruncated = fmt.Errorf("idv: %w", mlfeed.ErrTruncated)
	// ErrUnsupported means a valid feature this package (or ML.NET) does not read or write.
	ErrUnsupported = fmt.Errorf("idv: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge means a size claimed by the file exceeds what the file or a limit allows.
	ErrTooLarge = fmt.Errorf("idv: %w", mlfeed.ErrTooLarge)
	// ErrRange means a value cannot be stored in IDV (a DateTime before year 1, ...).
	ErrRange = fmt.Errorf("idv: %w", mlfeed.ErrRange)
)

const (
	headerSize = 256
	// signature is the head signature "CML\0DVB\0" read as a little-endian uint64.
	signature uint64 = 0x00425644004C4D43
	// tailSignature is the head signature byte-reversed.
	tailSignature uint64 = 0x434D4C0044564200
)

// MakeVersion packs an ML.NET format version a.b.c.d as IDV stores it.
func MakeVersion(a, b, c, d uint16) uint64 {
	return uint64(a)<<48 | uint64(b)<<32 | uint64(c)<<16 | uint64(d)
}

// Format versions.
var (
	// WriterVersion is the version this package writes, both as Version and
	// CompatibleVersion: 1.1.1.6, what current ML.NET writes.
	WriterVersion = MakeVersion(1, 1, 1, 6)
	minVersion    = MakeVersion(1, 1, 1, 2)
	minCompatible = MakeVersion(1, 1, 1, 4)
)

// VersionString formats a packed version as "a.b.c.d".
func VersionString(v uint64) string {
	return fmt.Sprintf("%d.%d.%d.%d", v>>48, v>>32&0xffff, v>>16&0xffff, v&0xffff)
}

// Header is the fixed 256-byte header of an IDV stream.
type Header struct {
	Version           uint64 // version of the writer
	CompatibleVersion uint64 // oldest reader version that can read the file
	TOCOffset         int64  // offset of the column table of contents
	TailOffset        int64  // offset of the tail signature; the stream is TailOffset+8 bytes
	RowCount          int64  // number of rows
	ColumnCount       int32  // number of columns in the table of contents
}

// Compression kinds of blocks, as stored in the file.
const (
	compNone    = 0
	compDeflate = 1
)

func compressionName(c byte) string {
	switch c {
	case compNone:
		return "none"
	case compDeflate:
		return "deflate"
	}
	return fmt.Sprintf("unknown(%d)", c)
}
