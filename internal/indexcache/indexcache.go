// Package indexcache keeps a reader's index of a data file in a file beside it,
// NAME.mlfeed-index (the cache_index option of TFRecord and WebDataset), so that opening the
// file again skips the scan that built the index.
//
// A cache file is, little-endian:
//
//	8 bytes magic (the format's, which names the layout and its version)
//	u64 the data's size (decompressed)
//	u64 × counts: the format's counts (records, members, lengths of its parts)
//	u64 length of the JSON description, then the JSON (what the scan found besides offsets)
//	the payload: the format's arrays, whose length its counts fix
//
// A cache is used only while it is fresh: not older than the data file, of the data's size,
// and no larger than a cache of that data can be (Load's bounds). The format checks the rest
// (every count and offset against the data) and scans again when anything does not fit. A
// cache is written atomically (package atomicfile) and on a best-effort basis: a directory
// that cannot take it leaves the reader working without one.
package indexcache

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"

	"github.com/mlfeed/mlfeed/internal/atomicfile"
)

// Suffix ends the name of a cache beside its data file: a reader of a directory of shards
// skips files named so.
const Suffix = ".mlfeed-index"

// Name returns the name of the cache of the data file input.
func Name(input string) string { return input + Suffix }

// MaxSize is the most bytes a cache of size bytes of data may take: 64 KiB for the header and
// the description, and 2 bytes per byte of data for the payload. A format's payload must stay
// within that (a TFRecord record takes 16 bytes of data and 16 of payload; a tar member 512
// and 44).
func MaxSize(size int64) int64 { return 64<<10 + 2*size + 64 }

// magicLen is the length of a cache's magic.
const magicLen = 8

// Write writes the cache name of size bytes of data: magic (8 bytes), size, counts, desc as
// JSON, then what payload writes. A file or link already called name is removed first, never
// written through. It reports whether the cache was written; on failure nothing is left.
func Write(name, magic string, size int64, counts []uint64, desc any, payload func(w *bufio.Writer)) bool {
	if len(magic) != magicLen {
		panic("indexcache: magic " + magic + " is not 8 bytes")
	}
	js, err := json.Marshal(desc)
	if err != nil {
		return false
	}
	os.Remove(name)
	f, err := atomicfile.Create(name)
	if err != nil {
		return false
	}
	w := bufio.NewWriterSize(f, 1<<16)
	le := binary.LittleEndian
	b := make([]byte, 0, headerLen(len(counts))+len(js))
	b = append(b, magic...)
	b = le.AppendUint64(b, uint64(size))
	for _, c := range counts {
		b = le.AppendUint64(b, c)
	}
	b = le.AppendUint64(b, uint64(len(js)))
	w.Write(append(b, js...))
	payload(w)
	if err := w.Flush(); err != nil {
		f.Abort()
		return false
	}
	return f.Commit() == nil
}

// headerLen is the length of a header with n counts.
func headerLen(n int) int { return magicLen + 8*(n+2) }

// Load reads the cache name of the data file input, which holds size bytes of data, when it
// is fresh: not older than input, at most MaxSize(size) bytes, and starting with magic and
// size. It returns the n counts that follow and the payload, having decoded the JSON
// description into desc. ok is false, and the data must be scanned, for a cache that is
// missing, stale, of another layout or cut short; the payload's length is the caller's to
// check against the counts.
func Load(name, input, magic string, size int64, n int, desc any) (counts []uint64, payload []byte, ok bool) {
	cst, err := os.Stat(name)
	if err != nil {
		return nil, nil, false
	}
	hl := headerLen(n)
	ist, err := os.Stat(input)
	if err != nil || cst.ModTime().Before(ist.ModTime()) || cst.Size() < int64(hl) || cst.Size() > MaxSize(size) {
		return nil, nil, false
	}
	b, err := os.ReadFile(name)
	if err != nil || len(b) < hl || string(b[:magicLen]) != magic {
		return nil, nil, false
	}
	le := binary.LittleEndian
	if le.Uint64(b[magicLen:]) != uint64(size) {
		return nil, nil, false
	}
	counts = make([]uint64, n)
	for i := range counts {
		counts[i] = le.Uint64(b[magicLen+8+8*i:])
	}
	jl := le.Uint64(b[hl-8:])
	if jl > uint64(len(b)-hl) || json.Unmarshal(b[hl:hl+int(jl)], desc) != nil {
		return nil, nil, false
	}
	return counts, b[hl+int(jl):], true
}
