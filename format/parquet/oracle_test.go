package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// The tests ask arrow-go, an implementation independent of the one this package uses
// (parquet-go), whether a file is valid Parquet.

// openParquet opens a Parquet file with arrow-go, turning its panics on malformed footers into
// errors.
func openParquet(r io.ReaderAt, size int64, opts ...file.ReadOption) (pf *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("malformed footer (%v)", p)
		}
	}()
	return file.NewParquetReader(io.NewSectionReader(r, 0, size), opts...)
}

// patchedFooter returns the file's footer without the logical types arrow-go does not know
// (withoutUnknownLogicalTypes), or nil when it has none or cannot be read so.
func patchedFooter(r io.ReaderAt, size int64) (md *metadata.FileMetaData) {
	defer func() {
		if recover() != nil {
			md = nil
		}
	}()
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return nil
	}
	patched := withoutUnknownLogicalTypes(footer)
	if patched == nil {
		return nil
	}
	md, err := metadata.NewFileMetaData(patched, nil)
	if err != nil {
		return nil
	}
	return md
}

// arrowLacks reports whether err, from arrow-go, says that it lacks a feature the file uses
// (arrow.ErrNotImplemented, or a message saying "not supported", "unimplemented" or
// "unhandled"), rather than that the file is broken.
func arrowLacks(err error) bool {
	if errors.Is(err, arrow.ErrNotImplemented) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "not supported") || strings.Contains(msg, "unimplemented") || strings.Contains(msg, "unhandled")
}
