// Package cbf reads and writes the CNTK Binary Format (CBF), the chunked binary format of
// CNTK's CNTKBinaryReader (CBFDeserializer), and converts CNTK Text Format into it exactly as
// CNTK's Scripts/ctf2bin.py does.
//
// # Layout
//
// All integers are little-endian. A CBF version 1 file is:
//
//	prefix   u64 magic 0x636e746b5f62696e, u32 version (1)
//	chunk*   u32 length[numSequences]                     one per sequence of the chunk
//	         for each stream, for each sequence of the chunk:
//	           dense:  u32 nSamples, elem[nSamples*dim]
//	           sparse: u32 nSamples, i32 nnz, elem[nnz] values, i32[nnz] indices,
//	                   i32[nSamples] nnz per sample
//	header   u64 magic, u32 numChunks, u32 numStreams,
//	         per stream: u8 encoding (0 dense, 1 sparse), u32 nameLength, name,
//	                     u8 element type (0 float32, 1 float64), u32 dim
//	         per chunk:  i64 offset, u32 numSequences, u32 numSamples
//	trailer  i64 offset of the header (the last 8 bytes of the file)
//
// A sequence's length is the largest sample count any stream has in it; a chunk's sample
// count is the sum of its sequences' lengths.
//
// # Reading
//
// [NewReader] reads the header and the chunk table, and nothing else, from an io.ReaderAt;
// [Open] does the same for a file, which it memory-maps. [Reader.ReadChunk] decodes one chunk
// and may be called from several goroutines at once; [Reader.ReadChunkReuse] decodes into the
// memory of a chunk the caller is done with. CNTK's own reader trusts the file; this
// one checks every claim before using it: the magic at the start and at the header offset,
// the version, stream encodings, element types, dimensions and names, chunk offsets
// (increasing, inside the data section), the chunk table against the chunk sizes, and in each
// chunk every length against the bytes that remain before anything is allocated, sequence
// lengths against the table and the streams, nnz counts against the per-sample counts, and
// sparse indices against [0, dim). Every failure is a *mlfeed.PosError naming the file, the
// byte offset and the field. [Validate] also reports what reading tolerates (stray bytes,
// unsorted sparse indices).
//
// # Writing
//
// [NewWriter] writes any data set whose streams are float32 or float64 (dense or sparse) to an
// io.Writer, streaming: chunks are cut on sequence boundaries near [WriterOptions.ChunkSize]
// bytes, and the header is written last, by Close. Memory use is bounded by the chunk size.
// Sparse indices are written sorted within each sample (a stable sort, so duplicates keep
// their order), as CNTK's reader expects.
//
// With [WriterOptions.Compat] set to "ctf2bin" the writer reproduces ctf2bin.py byte for byte
// when fed the sequences of the CTF file ctf2bin.py would read: see [CompatCTF2Bin].
package cbf

import (
	"encoding/binary"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Magic is the number that starts a CBF file and its header ("nib_ktnc" on disk).
const Magic uint64 = 0x636e746b5f62696e

// Version is the CBF version this package reads and writes.
const Version uint32 = 1

// DefaultChunkSize is the target chunk size, in bytes, of the writer (and ctf2bin.py's default).
const DefaultChunkSize = 32 << 20

// CompatCTF2Bin is the WriterOptions.Compat value that reproduces CNTK's Scripts/ctf2bin.py:
//
//   - the chunk size estimate is the one ctf2bin.py keeps (per kept sample: dim×4 or dim×8
//     bytes for dense, nnz×8+4 or nnz×12+4 for sparse, float or double) and it is never
//     reset, so after the first chunk is cut every sequence but the last gets a chunk of its
//     own, and the last sequence always joins the current chunk;
//   - empty sparse samples (nnz 0) are dropped, as ctf2bin.py drops an input with no values;
//   - an empty data set still gets one (empty) chunk.
//
// Sequence lengths (the longest stream) and sorted sparse indices are what the writer always
// does. ctf2bin.py's grouping of lines into sequences (by id; a line without an id continues
// the sequence before it) is the CTF reader's own (package ctf), so a CTF file converted with
// this mode gives ctf2bin.py's sequences; the writer writes the sequences it is given.
const CompatCTF2Bin = "ctf2bin"

var (
	// ErrFormat is wrapped by errors for data that is not valid CBF.
	ErrFormat = fmt.Errorf("cbf: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for files that end before their structures do.
	ErrTruncated = fmt.Errorf("cbf: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for counts or lengths that claim more bytes than the
	// file or chunk holds, and for data beyond the format's 32-bit fields.
	ErrTooLarge = fmt.Errorf("cbf: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for valid files of a version this package does not
	// read, and for data CBF cannot hold (element types other than float32 and float64,
	// variable-size dense samples).
	ErrUnsupported = fmt.Errorf("cbf: %w", mlfeed.ErrUnsupported)
)

// Encodings and element type codes of the header.
const (
	encDense  = 0
	encSparse = 1

	elemFloat  = 0
	elemDouble = 1
)

// Sizes of the fixed parts.
const (
	prefixSize     = 12 // magic + version
	headerFixed    = 16 // magic + numChunks + numStreams
	trailerSize    = 8  // header offset
	chunkEntrySize = 16 // offset + numSequences + numSamples
	minStreamDesc  = 11 // encoding + nameLength + 1-byte name + element type + dim
)

var le = binary.LittleEndian

// Match reports whether head starts with the CBF magic number.
func Match(head []byte) bool {
	return len(head) >= 8 && le.Uint64(head) == Magic
}

// Header is the decoded header of a CBF file.
type Header struct {
	// Version is the format version from the prefix (always Version once read).
	Version uint32
	// Offset is the byte offset of the header, as the trailer gives it.
	Offset int64
	// Streams describe the streams in file order, with their names in the file.
	Streams []StreamHeader
	// Chunks is the chunk table.
	Chunks []ChunkEntry
}

// StreamHeader describes one stream as the header stores it.
type StreamHeader struct {
	Name    string          // the stream's name in the file
	Storage mlfeed.Storage  // encoding 0 (dense) or 1 (sparse)
	Type    mlfeed.ElemType // Float32 or Float64
	Dim     int             // values per dense sample, or the sparse index bound
}

// ChunkEntry is one entry of the chunk table.
type ChunkEntry struct {
	Offset    int64  // byte offset of the chunk's length array
	Sequences uint32 // sequences in the chunk
	Samples   uint32 // sum of the sequences' lengths
}

func elemCode(t mlfeed.ElemType) (byte, bool) {
	switch t {
	case mlfeed.Float32:
		return elemFloat, true
	case mlfeed.Float64:
		return elemDouble, true
	}
	return 0, false
}

// appendHeaderStart appends what comes before the chunk table in the header of h, whose table
// holds n entries (h.Chunks is not looked at): the writer encodes the table as it goes.
func appendHeaderStart(b []byte, h *Header, n int) []byte {
	b = le.AppendUint64(b, Magic)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, uint32(len(h.Streams)))
	for _, s := range h.Streams {
		enc := byte(encDense)
		if s.Storage == mlfeed.Sparse {
			enc = encSparse
		}
		code, _ := elemCode(s.Type)
		b = append(b, enc)
		b = le.AppendUint32(b, uint32(len(s.Name)))
		b = append(b, s.Name...)
		b = append(b, code)
		b = le.AppendUint32(b, uint32(s.Dim))
	}
	return b
}

// appendChunkEntry appends the encoded entry c of the chunk table.
func appendChunkEntry(b []byte, c ChunkEntry) []byte {
	b = le.AppendUint64(b, uint64(c.Offset))
	b = le.AppendUint32(b, c.Sequences)
	return le.AppendUint32(b, c.Samples)
}

// appendTrailer appends the trailer: the header's offset.
func appendTrailer(b []byte, offset int64) []byte { return le.AppendUint64(b, uint64(offset)) }

// prefix returns the 12 bytes that start every CBF file.
func prefix() []byte {
	return le.AppendUint32(le.AppendUint64(nil, Magic), Version)
}
