package parquet

import (
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// emptyBody wraps one of arrow-go's codecs so that a compressed block of zero bytes decodes to
// zero bytes. Some writers (arrow-rs) store a version-2 data page whose values are all null
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
