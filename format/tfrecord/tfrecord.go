// Package tfrecord reads and writes TensorFlow's TFRecord files of tf.train.Example and
// tf.train.SequenceExample records, without TensorFlow.
//
// A TFRecord file is a sequence of records, each framed as
//
//	uint64 length, uint32 masked CRC-32C of length, length bytes of data, uint32 masked CRC-32C of data
//
// (little-endian; the mask is TensorFlow's: ((crc >> 15) | (crc << 17)) + 0xa282ead8). Files may
// be compressed as a whole with GZIP or ZLIB (TensorFlow's compression_type "GZIP" and "ZLIB").
// The Reader checks both CRCs of every record and reports a mismatch or a truncation with the
// byte offset of the record's start (in the decompressed data for compressed files).
//
// # Mapping
//
// Records hold tf.train.Example by default, decoded from the protobuf wire format directly
// (package protowire). Each feature is a stream: float_list float32, int64_list int64,
// bytes_list bytes (mlfeed.Bytes: opaque, never decoded). A numeric feature of the same length
// L in every record is one dense sample of dim L per record (dim 0 if always empty); one whose
// length varies, or that some records lack (an absent feature has length 0), is a sequence of
// scalar samples, one per element; a bytes_list is always a sequence of bytes samples, one per
// element. A feature whose kind changes between records is an error naming the record.
//
// A tf.train.SequenceExample's context features follow the same rules, and each of its
// feature_lists is a stream whose samples are its entries (dense of dim L when every entry
// of every record has L values, else samples of varying size). Records are read as
// SequenceExamples when any record has feature_lists (or with records=sequence_example);
// records=raw reads each record as one bytes sample of a stream "record".
//
// Opening a file scans it once (both CRCs, the features' kinds and lengths) and keeps a
// record-offset index; the chunk table groups whole records, so random access, the block
// randomizer and workers split the data by record. With ReaderOptions.CacheIndex the index is
// kept beside the file and reused while it is newer than the file.
//
// # Writing
//
// The Writer writes tf.train.Example records, one per sequence: a stream whose sequences hold
// one sample becomes a feature of that sample's values, and a stream of scalar samples (dim 1)
// a feature of its samples' values. With WriterOptions.Records "sequence_example" it writes
// tf.train.SequenceExample records whose feature_lists hold each stream's samples, for
// sequences of several samples of higher dimension. float32 values go to float_list; int64
// and the narrower integer types and bool to int64_list; bytes and text to bytes_list. A type
// TFRecord cannot hold (float64, uint64 values of 2^63 and more, complex, time types) is refused
// (mlfeed.ErrUnsupported, exit 2): convert it first (mlfeed convert --type float32).
package tfrecord

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/mlfeed/mlfeed"
)

// Sentinel errors, wrapping mlfeed's.
var (
	// ErrFormat is wrapped by errors for data that is not valid TFRecord: a CRC mismatch, a
	// malformed protobuf message, a feature whose kind changes.
	ErrFormat = fmt.Errorf("tfrecord: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for files that end inside a record.
	ErrTruncated = fmt.Errorf("tfrecord: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for a record length beyond the data or the limit.
	ErrTooLarge = fmt.Errorf("tfrecord: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for data or options mlfeed does not handle: a value
	// TFRecord cannot hold, an unknown records mode.
	ErrUnsupported = fmt.Errorf("tfrecord: %w", mlfeed.ErrUnsupported)
)

// headerSize and footerSize are the bytes around a record's data.
const (
	headerSize = 12 // length (8) and its masked CRC (4)
	footerSize = 4  // masked CRC of the data
)

// DefaultChunkSize is the default number of bytes of records per chunk.
const DefaultChunkSize = 4 << 20

// DefaultMaxMemory is the default bound on the decompressed data of a compressed file held in
// memory; beyond it the data goes to a temporary file.
const DefaultMaxMemory = 1 << 30

// DefaultMaxRecord is the default bound on one record's length.
const DefaultMaxRecord = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const maskDelta = 0xa282ead8

// MaskedCRC returns TensorFlow's masked CRC-32C of b, as stored after a record's length and
// data.
func MaskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + maskDelta
}

// Match reports whether head starts with a TFRecord record header (a length whose masked
// CRC-32C follows it; a random 12 bytes pass with probability 2^-32), plain or at the start
// of GZIP or ZLIB data, so that TFX's "data_tfrecord-00000-of-00001.gz" is recognised
// whatever its name.
func Match(head []byte) bool {
	if matchPlain(head) {
		return true
	}
	var zr io.Reader
	var err error
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		zr, err = gzip.NewReader(bytes.NewReader(head))
	case isZlib(head):
		zr, err = zlib.NewReader(bytes.NewReader(head))
	default:
		return false
	}
	if err != nil {
		return false
	}
	var b [headerSize]byte
	n, _ := io.ReadFull(zr, b[:])
	return matchPlain(b[:n])
}

func matchPlain(head []byte) bool {
	return len(head) >= headerSize && MaskedCRC(head[:8]) == binary.LittleEndian.Uint32(head[8:12])
}

// isZlib reports whether h starts with a zlib header (RFC 1950: deflate, a window of at most
// 32 KiB, a check value).
func isZlib(h []byte) bool {
	return len(h) >= 2 && h[0]&0x0f == 8 && h[0]>>4 <= 7 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}

// Records modes (ReaderOptions.Records, WriterOptions.Records, the records= option).
const (
	RecordsAuto            = ""                 // Example, or SequenceExample when records have feature_lists
	RecordsExample         = "example"          // tf.train.Example
	RecordsSequenceExample = "sequence_example" // tf.train.SequenceExample
	RecordsRaw             = "raw"              // each record one bytes sample of stream "record"
)

// Compressions (ReaderOptions.Compression, the compression= option).
const (
	CompressionAuto = ""     // from the data: gzip or zlib header, else none
	CompressionNone = "none" // plain records
	CompressionGzip = "gzip" // TensorFlow's "GZIP"
	CompressionZlib = "zlib" // TensorFlow's "ZLIB"
)

func checkRecords(mode string) error {
	switch mode {
	case RecordsAuto, RecordsExample, RecordsSequenceExample, RecordsRaw:
		return nil
	}
	return fmt.Errorf("%w: records %q (want example, sequence_example or raw)", ErrUnsupported, mode)
}
