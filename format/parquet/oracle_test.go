package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/compress"
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

// emptyBody wraps one of arrow-go's codecs, for the oracle, so that a compressed block of zero
// bytes decodes to zero bytes, as this package reads it. Some writers (arrow-rs) store a version-2 data page whose values are all null
// with an empty body instead of a compressed empty block, which is not a valid snappy stream;
// DuckDB, parquet-mr and the Parquet project's own test files take it as empty
// (parquet-testing's datapage_v2_empty_datapage.snappy.parquet).
type emptyBody struct{ inner compress.Codec }

func init() {
	for _, c := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Brotli,
		compress.Codecs.Zstd, compress.Codecs.Lz4Raw} {
		if inner, err := compress.GetCodec(c); err == nil {
			if _, ok := inner.(compress.StreamingCodec); ok {
				compress.RegisterCodec(c, emptyBody{inner})
			}
		}
	}
}

func (c emptyBody) Encode(dst, src []byte) []byte { return c.inner.Encode(dst, src) }

func (c emptyBody) EncodeLevel(dst, src []byte, level int) []byte {
	return c.inner.EncodeLevel(dst, src, level)
}

func (c emptyBody) CompressBound(n int64) int64 { return c.inner.CompressBound(n) }

// Decode decodes src, or gives an empty block for an empty src.
func (c emptyBody) Decode(dst, src []byte) []byte {
	if len(src) == 0 {
		return dst[:0]
	}
	return c.inner.Decode(dst, src)
}

// DecodeWithError decodes src, or gives an empty block for an empty src, with the inner
// codec's error for a malformed one.
func (c emptyBody) DecodeWithError(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	return compress.Decode(c.inner, dst, src)
}

func (c emptyBody) NewReader(r io.Reader) io.ReadCloser {
	return c.inner.(compress.StreamingCodec).NewReader(r)
}

func (c emptyBody) NewWriter(w io.Writer) io.WriteCloser {
	return c.inner.(compress.StreamingCodec).NewWriter(w)
}

func (c emptyBody) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.inner.(compress.StreamingCodec).NewWriterLevel(w, level)
}
