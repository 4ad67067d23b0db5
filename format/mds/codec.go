package mds

import (
	"bytes"
	"compress/bzip2"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// codec is one of Streaming's compressions ("zstd", "zstd:7", ...).
type codec struct {
	ext   string // the file name extension, and the compression's family name
	level int    // 0: the family's default
}

// Streaming's default levels of the levelled compressions.
var defaultLevels = map[string]int{"bz2": 9, "gz": 9, "zstd": 3}

// codecOf parses a compression name as index.json and MDSWriter give it.
func codecOf(s string) (codec, error) {
	fam, lv, hasLevel := strings.Cut(s, ":")
	c := codec{ext: fam}
	switch fam {
	case "zstd", "gz", "bz2":
	case "br":
		// The one Go brotli library links net/http; format packages link no network code.
		return c, fmt.Errorf("%w: compression %q: mlfeed does not read brotli shards (decompress them with Streaming, or rewrite the data set with zstd)", ErrUnsupported, s)
	case "snappy":
		if hasLevel {
			return c, fmt.Errorf("%w: compression %q: snappy has no levels", ErrUnsupported, s)
		}
	default:
		return c, fmt.Errorf("%w: compression %q (want zstd, gz, bz2 or snappy, with :LEVEL)", ErrUnsupported, s)
	}
	if hasLevel {
		n, err := strconv.Atoi(lv)
		if err != nil || n < 0 || n > 22 {
			return c, fmt.Errorf("%w: compression %q: level %q", ErrUnsupported, s, lv)
		}
		c.level = n
	} else {
		c.level = defaultLevels[fam]
	}
	return c, nil
}

// zstdWindow bounds the window a zstd frame may declare beyond its data (zstd's own default
// bound for decoders is 8 MiB).
const zstdWindow = 8 << 20

// decompress returns the decompressed src, of exactly want bytes: more or fewer is an error,
// and no more than want bytes are ever allocated for it.
func (c codec) decompress(src []byte, want int64) ([]byte, error) {
	var r io.Reader
	switch c.ext {
	case "zstd":
		// The output is bounded by want (the cap of what it decodes into); a frame's window, which
		// encoders may declare larger than the data, by zstdWindow.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(want+1, zstdWindow))), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		// A frame that states its size (as Streaming's and mlfeed's do) is checked before
		// anything is allocated for it; one that does not grows with what it decodes to.
		var h zstd.Header
		if err := h.Decode(src); err != nil {
			return nil, err
		}
		if h.HasFCS && h.FrameContentSize != uint64(want) {
			return nil, fmt.Errorf("the zstd frame holds %d bytes, not the %d raw_data says", h.FrameContentSize, want)
		}
		if !h.HasFCS {
			if err := d.Reset(bytes.NewReader(src)); err != nil {
				return nil, err
			}
			return readExact(d, want)
		}
		out, err := d.DecodeAll(src, make([]byte, 0, want))
		if err != nil {
			return nil, err
		}
		return exact(out, want)
	case "snappy":
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if int64(n) != want {
			return nil, fmt.Errorf("snappy data of %d bytes, not %d", n, want)
		}
		return snappy.Decode(make([]byte, n), src)
	case "gz":
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case "bz2":
		r = bzip2.NewReader(bytes.NewReader(src))
	}
	return readExact(r, want)
}

// readExact reads r, which must hold want bytes: the buffer grows with what r gives, never
// past want+1 bytes.
func readExact(r io.Reader, want int64) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, want+1))
	if err != nil {
		return nil, err
	}
	return exact(out, want)
}

func exact(b []byte, want int64) ([]byte, error) {
	if int64(len(b)) != want {
		return nil, fmt.Errorf("decompresses to %d bytes or more, not the %d raw_data says", len(b), want)
	}
	return b, nil
}

// compress returns src compressed.
func (c codec) compress(src []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch c.ext {
	case "zstd":
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(c.level)), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
		if err != nil {
			return nil, err
		}
		return e.EncodeAll(src, nil), e.Close()
	case "snappy":
		return snappy.Encode(nil, src), nil
	case "gz":
		w, err = gzip.NewWriterLevel(&buf, c.level)
	default:
		return nil, fmt.Errorf("%w: compression %q: mlfeed reads it but does not write it", ErrUnsupported, c.ext)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: compression %s:%d: %v", ErrUnsupported, c.ext, c.level, err)
	}
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hashes are the hash algorithms the writer computes (Python's hashlib and xxhash names).
var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
	"sha3_224": func() hash.Hash { return sha3.New224() }, "sha3_256": func() hash.Hash { return sha3.New256() },
	"sha3_384": func() hash.Hash { return sha3.New384() }, "sha3_512": func() hash.Hash { return sha3.New512() },
	"xxh64": func() hash.Hash { return xxhash.New() },
}

// hashNames lists the hash algorithms for messages.
const hashNames = "md5, sha1, sha224, sha256, sha384, sha512, sha3_224, sha3_256, sha3_384, sha3_512, xxh64"

// hexDigest returns the hex digest of b by algo, as Python's hexdigest() writes it.
func hexDigest(algo string, b []byte) string {
	h := hashes[algo]()
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
