// Package parquet reads and writes Apache Parquet files through
// github.com/parquet-go/parquet-go's pages and column writers, mapping columns to Arrow arrays
// (github.com/apache/arrow-go's arrow and ipc packages, not its compute kernels or Flight).
//
// A column is a stream and a row is a sequence, mapped as in Arrow (package
// internal/arrowmap, documented in docs/parquet.md): dense scalars are primitive columns,
// dense vectors lists of equal length, sparse samples a struct of an indices list and a
// values list, sequences of several samples a list of samples, text UTF-8 strings. mlfeed
// stores its Arrow schema with the file (the ARROW:schema key, as pyarrow does), so stream
// metadata survives a round trip; files from other writers (DuckDB, pandas, Spark) are read by
// their types: primitive columns, lists of equal length as dense vectors, dictionary-encoded
// columns (decoded), dates and timestamps (INT96 too) as DateTime ticks, times of day as
// Duration ticks; nulls are refused with the column and row.
//
// Chunks follow row groups; the chunk table comes from the footer without decoding data.
// Decoding is synchronous: a row group's columns are decoded one after another on the
// caller's goroutine, and the reader starts no goroutines. Written files are compressed with
// zstd unless WriterOptions.Compression says otherwise (snappy, gzip, none).
package parquet

import (
	"bytes"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

var (
	// ErrFormat is wrapped by errors for data that is not valid Parquet, or not laid out as
	// its mlfeed metadata says.
	ErrFormat = fmt.Errorf("parquet: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for files that end early.
	ErrTruncated = fmt.Errorf("parquet: %w", mlfeed.ErrTruncated)
	// ErrUnsupported is wrapped by errors for valid Parquet data mlfeed cannot hold (nulls,
	// decimals, intervals, maps) and for streams Parquet cannot hold.
	ErrUnsupported = fmt.Errorf("parquet: %w", mlfeed.ErrUnsupported)
)

// magic starts and ends a Parquet file.
const magic = "PAR1"

// Match reports whether head starts with the Parquet magic.
func Match(head []byte) bool { return bytes.HasPrefix(head, []byte(magic)) }

// mapErr gives an error of the shared Arrow mapping this package's name and sentinels.
func mapErr(err error) error {
	return arrowmap.Wrap(err, "parquet", ErrFormat, ErrUnsupported)
}
