// Package arrow reads and writes Apache Arrow IPC data: files (.arrow, and Feather v2, which is
// the same format) and IPC streams (.arrows), through github.com/apache/arrow-go.
//
// A column is a stream and a row is a sequence; the mapping of stream types to Arrow types,
// and the field metadata that makes mlfeed -> Arrow -> mlfeed lossless, is package
// internal/arrowmap's and is documented in docs/arrow.md. Files from other writers are read by
// their Arrow types: primitive columns, List, LargeList and FixedSizeList columns of them,
// dictionary-encoded values (decoded), text; nulls are refused with the column and row.
//
// Chunks follow record batches. The chunk table is read from the footer and the batches'
// message headers without loading any batch. Open maps a file into memory, and record batches
// of an uncompressed file are handed out without a copy. An IPC stream is indexed by its
// message framing the same way, and a batch is decoded on request with the schema and
// dictionaries that precede it.
//
// Decoding is synchronous; the reader starts no goroutines.
package arrow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

var (
	// ErrFormat is wrapped by errors for data that is not valid Arrow IPC, or not laid out as
	// its mlfeed metadata says.
	ErrFormat = fmt.Errorf("arrow: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for data that ends early.
	ErrTruncated = fmt.Errorf("arrow: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for headers that claim more than the data or a limit
	// allows.
	ErrTooLarge = fmt.Errorf("arrow: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for valid Arrow data mlfeed cannot hold (nulls,
	// decimals, intervals, unions, Feather v1) and for streams Arrow cannot hold.
	ErrUnsupported = fmt.Errorf("arrow: %w", mlfeed.ErrUnsupported)
)

// magic starts and ends an Arrow IPC file.
const magic = "ARROW1"

// Match reports whether head starts like Arrow IPC data: the file magic "ARROW1", or an IPC
// stream's first message, a schema.
func Match(head []byte) bool {
	return bytes.HasPrefix(head, []byte(magic)) || matchStream(head)
}

// matchStream reports whether head starts with a framed schema message: one that head
// holds, parsed; or the start of a longer one (a schema of many columns), which MatchFile
// reads whole. The frame is the continuation marker and the message's length, or (streams
// of Arrow before 0.15) the length alone, a message of at most maxLegacySchema bytes.
func matchStream(head []byte) bool {
	if len(head) < 16 {
		return false
	}
	at, n := 8, int(int32(binary.LittleEndian.Uint32(head[4:])))
	if binary.LittleEndian.Uint32(head) != 0xFFFFFFFF {
		at, n = 4, int(int32(binary.LittleEndian.Uint32(head)))
		if n > maxLegacySchema {
			return false
		}
	}
	if n <= 0 || (at+n)%8 != 0 {
		return false
	}
	if at+n > len(head) {
		return true
	}
	m, err := parseMessage(head[at : at+n])
	return err == nil && m.kind == headerSchema
}

// maxLegacySchema is the largest schema message detection reads for a stream without the
// continuation marker (Arrow before 0.15), whose first 4 bytes are all there is to go by.
const maxLegacySchema = 1 << 20

// MatchFile reports whether the size bytes of r, whose head Match accepted, are an Arrow file,
// or a stream whose first message is a schema (read whole: up to 64 MiB, or maxLegacySchema
// without the continuation marker).
func MatchFile(r io.ReaderAt, size int64) bool {
	var head [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return false
	}
	if bytes.HasPrefix(head[:], []byte(magic)) {
		return true
	}
	if binary.LittleEndian.Uint32(head[:]) != 0xFFFFFFFF && int32(binary.LittleEndian.Uint32(head[:])) > maxLegacySchema {
		return false
	}
	m, ok, err := readMessage(r, size, 0, "")
	return err == nil && ok && m.kind == headerSchema
}

// mapErr gives an error of the shared Arrow mapping this package's name and sentinels.
func mapErr(err error) error {
	return arrowmap.Wrap(err, "arrow", ErrFormat, ErrUnsupported)
}
