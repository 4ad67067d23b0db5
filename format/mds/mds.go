// Package mds reads and writes MosaicML Streaming's MDS data sets: a directory holding
// index.json and shards shard.NNNNN.mds, each optionally compressed (shard.NNNNN.mds.zstd).
//
// index.json (version 2) lists the shards; each entry gives the shard's columns (names,
// encodings and fixed sizes), its sample count, its file (raw_data) and, when compressed, the
// compressed file (zip_data). A shard is
//
//	uint32 n, uint32 offsets[n+1], the shard's configuration as JSON, the samples
//
// (little-endian), sample k lying at [offsets[k], offsets[k+1]) of the (decompressed) file.
// A sample is a uint32 size for every column of variable size, in column order, then each
// column's bytes in column order.
//
// # Mapping
//
// Each MDS sample is one mlfeed sequence, and each column a stream:
//
//   - int8 ... uint64, float32, float64: a dense sample of dim 1 of that type; int: int64;
//     float16: float32 (every float16 value is exactly a float32; the writer writes float32
//     back unless told float16).
//   - ndarray:DTYPE:SHAPE: a dense sample of that type and shape.
//   - ndarray:DTYPE (each sample its own shape): a dense sample of varying size holding the
//     values in row-major order, and a stream NAME.shape of int64 holding each sample's shape.
//   - ndarray (each sample its own dtype too): as ndarray:DTYPE with the first sample's dtype;
//     a sample of another dtype is an error (mlfeed.ErrUnsupported).
//   - str, json, str_decimal: a string (the text as stored).
//   - str_int: int64; str_float: float64 (the number the text holds; a number that does not
//     fit is an error).
//   - bytes, jpeg, png, pil: bytes, the stored payload, never decoded.
//   - list[pil], list[jpeg], list[png], jpeg_array: a sequence of bytes samples, one per
//     element.
//   - pkl: refused (mlfeed.ErrUnsupported, exit 2); it is never unpickled. With
//     ReaderOptions.PickleAsBytes the pickled payload is read as bytes.
//
// The chunk table comes from index.json alone (samples per shard): chunks group consecutive
// samples of one shard, so random access, the block randomizer and workers split the data by
// sample, not by shard. A shard is mapped (or, when compressed, decompressed into memory
// within ReaderOptions.MaxMemory) when a chunk of it is first read, and its header checked
// then.
//
// # Writing
//
// The Writer writes what Mosaic's MDSWriter writes: shards of at most SizeLimit bytes (before
// compression), columns in name order, index.json with the same fields, optional compression
// (zstd, gz, snappy) and hashes of each file (sha1, md5, sha224, sha256, sha384, sha512,
// xxh64, xxh3_64, xxh128).
package mds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Sentinel errors, wrapping mlfeed's.
var (
	// ErrFormat is wrapped by errors for data that is not valid MDS.
	ErrFormat = fmt.Errorf("mds: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for a shard that ends before its header or samples.
	ErrTruncated = fmt.Errorf("mds: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for a shard or index beyond the memory budget.
	ErrTooLarge = fmt.Errorf("mds: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for encodings, compressions and values mlfeed does
	// not read or write (pkl, brotli, a value MDS cannot hold).
	ErrUnsupported = fmt.Errorf("mds: %w", mlfeed.ErrUnsupported)
)

// IndexName is the name of an MDS data set's index.
const IndexName = "index.json"

// DefaultChunkSize is the default number of bytes of samples per chunk.
const DefaultChunkSize = 4 << 20

// DefaultMaxMemory bounds the decompressed shards held in memory at once.
const DefaultMaxMemory = 1 << 30

// DefaultSizeLimit is MDSWriter's default shard size limit.
const DefaultSizeLimit = 1 << 26

// kind is how a column's bytes are read.
type kind uint8

const (
	kScalar   kind = iota // fixed-size numbers, as stored
	kFloat16              // float16, read as float32
	kNDFixed              // ndarray of fixed dtype and shape
	kNDShape              // ndarray with each sample's shape (and maybe dtype) before its values
	kText                 // str, json, str_decimal
	kBytes                // bytes, jpeg, png, pil (pkl with PickleAsBytes)
	kStrInt               // decimal text of an integer
	kStrFloat             // text of a float
	kList                 // list[...]: placeholder, count, sizes, elements
	kArray                // jpeg_array: count, sizes, elements
)

// column is one MDS column and how it maps to streams.
type column struct {
	name  string
	enc   string
	kind  kind
	size  int             // fixed size in bytes, 0 when each sample gives it
	typ   mlfeed.ElemType // the values' element type
	dtype bool            // ndarray: dtype fixed by the encoding
	shape []int           // ndarray: fixed shape, or nil
	esize int             // bytes per stored element (2 for float16)
}

// ndarray dtype codes (the byte before a sample's values when the encoding has no dtype).
var dtypeCodes = map[byte]string{
	8: "uint8", 9: "int8", 16: "uint16", 17: "int16", 18: "float16", 32: "uint32", 33: "int32",
	34: "float32", 64: "uint64", 65: "int64", 66: "float64",
}

// dtypeCode returns the code of a dtype name.
func dtypeCode(name string) byte {
	for c, n := range dtypeCodes {
		if n == name {
			return c
		}
	}
	return 0
}

// scalarTypes are the fixed-size numeric encodings and the element types they are read as.
var scalarTypes = map[string]mlfeed.ElemType{
	"int8": mlfeed.Int8, "int16": mlfeed.Int16, "int32": mlfeed.Int32, "int64": mlfeed.Int64,
	"uint8": mlfeed.Uint8, "uint16": mlfeed.Uint16, "uint32": mlfeed.Uint32, "uint64": mlfeed.Uint64,
	"float32": mlfeed.Float32, "float64": mlfeed.Float64, "float16": mlfeed.Float32, "int": mlfeed.Int64,
}

// maxShapeDims bounds an ndarray's axes (the encoding's 6-bit count).
const maxShapeDims = 63

// parseColumn returns the column an encoding describes. pkl is refused unless pickles is set.
func parseColumn(name, enc string, pickles bool) (column, error) {
	c := column{name: name, enc: enc}
	base, cfg, hasCfg := strings.Cut(enc, ":")
	if hasCfg && base != "ndarray" {
		return c, fmt.Errorf("%w: column %q: encoding %q takes no arguments", ErrFormat, name, enc)
	}
	if t, ok := scalarTypes[base]; ok {
		c.kind, c.typ, c.esize = kScalar, t, t.Size()
		if base == "float16" {
			c.kind, c.esize = kFloat16, 2
		}
		c.size = c.esize
		return c, nil
	}
	switch base {
	case "ndarray":
		return parseNDArray(c, cfg)
	case "str", "json", "str_decimal":
		c.kind, c.typ = kText, mlfeed.String
	case "bytes", "jpeg", "png", "pil":
		c.kind, c.typ = kBytes, mlfeed.Bytes
	case "str_int":
		c.kind, c.typ = kStrInt, mlfeed.Int64
	case "str_float":
		c.kind, c.typ = kStrFloat, mlfeed.Float64
	case "list[pil]", "list[jpeg]", "list[png]":
		c.kind, c.typ = kList, mlfeed.Bytes
	case "jpeg_array", "jpegarray":
		c.kind, c.typ = kArray, mlfeed.Bytes
	case "pkl":
		if !pickles {
			return c, fmt.Errorf("%w: column %q is pickled (pkl), which mlfeed never unpickles; --opt pkl=bytes reads the pickled payload as bytes", ErrUnsupported, name)
		}
		c.kind, c.typ = kBytes, mlfeed.Bytes
	default:
		return c, fmt.Errorf("%w: column %q: unknown encoding %q", ErrUnsupported, name, enc)
	}
	return c, nil
}

func parseNDArray(c column, cfg string) (column, error) {
	c.kind = kNDShape
	if cfg == "" {
		return c, nil // dtype from the first sample
	}
	dt, shp, hasShape := strings.Cut(cfg, ":")
	t, ok := scalarTypes[dt]
	if !ok || dt == "int" {
		return c, fmt.Errorf("%w: column %q: ndarray dtype %q", ErrFormat, c.name, dt)
	}
	c.dtype, c.typ, c.esize = true, t, t.Size()
	if dt == "float16" {
		c.esize = 2
	}
	if !hasShape {
		return c, nil
	}
	n := 1
	for _, f := range strings.Split(shp, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 1 || d > 1<<40 || n > (1<<40)/d {
			return c, fmt.Errorf("%w: column %q: ndarray shape %q", ErrFormat, c.name, shp)
		}
		c.shape = append(c.shape, d)
		n *= d
	}
	if len(c.shape) > maxShapeDims {
		return c, fmt.Errorf("%w: column %q: ndarray shape %q has more than %d axes", ErrFormat, c.name, shp, maxShapeDims)
	}
	c.kind, c.size = kNDFixed, n*c.esize
	return c, nil
}

// elems returns the number of values of a fixed ndarray column.
func (c *column) elems() int {
	n := 1
	for _, d := range c.shape {
		n *= d
	}
	return n
}

// streams returns the streams the column is read as.
func (c *column) streams() []mlfeed.Stream {
	st := mlfeed.Stream{Name: c.name, Type: c.typ, Dim: 1}
	switch c.kind {
	case kNDFixed:
		st.Dim = c.elems()
		if len(c.shape) > 1 {
			st.Shape = append([]int(nil), c.shape...)
		}
	case kNDShape:
		st.Dim = 0
		return []mlfeed.Stream{st, {Name: c.name + ShapeSuffix, Type: mlfeed.Int64}}
	}
	return []mlfeed.Stream{st}
}

// ShapeSuffix ends the name of the stream that holds the shapes of an ndarray column whose
// samples each have their own shape.
const ShapeSuffix = ".shape"
