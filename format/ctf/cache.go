package ctf

import (
	"bufio"
	"encoding/binary"
	"os"

	"github.com/mlfeed/mlfeed/internal/atomicfile"
)

// The index cache (cacheIndex) in CNTK's layout, little-endian:
//
//	prefix:  u64 magic, u64 version (1), u64 sequence count, u64 offset of the first record (32)
//	record:  u64 key, u32 samples, 4 pad, u64 byte offset, u32 byte size, 4 pad
//
// and under CNTK's name, so CNTK and mlfeed can share the file.

const (
	cacheMagic   = 0x636e746b5f696478
	cacheVersion = 1
	cachePrefix  = 32
	cacheRecord  = 32
)

// cacheName returns CNTK's cache file name for the input.
func cacheName(file string, main []byte, skipIDs bool) string {
	m := "_"
	if main != nil {
		m = string(main[1:])
	}
	skip := "0"
	if skipIDs {
		skip = "1"
	}
	return file + "." + m + "." + skip + ".0.0.v1.cache"
}

// cacheWriter writes the index cache as the index is built. Failures only disable it: the
// cache is an optimization.
type cacheWriter struct {
	name string
	f    *atomicfile.File
	w    *bufio.Writer
	n    uint64
	err  error
}

func newCacheWriter(name string) *cacheWriter {
	os.Remove(name) // the old cache is stale
	f, err := atomicfile.Create(name)
	if err != nil {
		return nil
	}
	w := bufio.NewWriterSize(f, 1<<16)
	_, err = w.Write(make([]byte, cachePrefix))
	return &cacheWriter{name: name, f: f, w: w, err: err}
}

func (c *cacheWriter) add(q seqInfo) {
	if c.err != nil {
		return
	}
	var rec [cacheRecord]byte
	le := binary.LittleEndian
	le.PutUint64(rec[0:], q.key)
	le.PutUint32(rec[8:], uint32(q.samples))
	le.PutUint64(rec[16:], uint64(q.start))
	le.PutUint32(rec[24:], uint32(q.end-q.start))
	_, c.err = c.w.Write(rec[:])
	c.n++
}

func (c *cacheWriter) abort() {
	if c == nil {
		return
	}
	c.f.Abort()
}

func (c *cacheWriter) commit() {
	if c == nil {
		return
	}
	if c.err == nil {
		c.err = c.w.Flush()
	}
	if c.err == nil {
		var p [cachePrefix]byte
		le := binary.LittleEndian
		le.PutUint64(p[0:], cacheMagic)
		le.PutUint64(p[8:], cacheVersion)
		le.PutUint64(p[16:], c.n)
		le.PutUint64(p[24:], cachePrefix)
		_, c.err = c.f.WriteAt(p[:], 0)
	}
	if c.err != nil {
		c.f.Abort()
		return
	}
	c.err = c.f.Commit()
}

// loadCache rebuilds the chunk table from a cache that is at least as new as the input and
// whose records fit the file: in order, each starting a line, and, unless lines can be
// dropped (a definesMBSize stream), the last ending the file. ok is false otherwise.
func loadCache(cache, input string, data []byte, l layout, chunkSize int64, frameMode, dropping bool) ([]chunkEntry, bool) {
	cst, err := os.Stat(cache)
	if err != nil {
		return nil, false
	}
	ist, err := os.Stat(input)
	if err != nil || cst.ModTime().Before(ist.ModTime()) {
		return nil, false
	}
	if cst.Size() < cachePrefix || (cst.Size()-cachePrefix)%cacheRecord != 0 || (cst.Size()-cachePrefix)/cacheRecord > l.size {
		return nil, false
	}
	b, err := os.ReadFile(cache)
	if err != nil || int64(len(b)) != cst.Size() {
		return nil, false
	}
	le := binary.LittleEndian
	n := le.Uint64(b[16:])
	first := le.Uint64(b[24:])
	if le.Uint64(b[0:]) != cacheMagic || first != cachePrefix || n != uint64(len(b)-cachePrefix)/cacheRecord {
		return nil, false
	}
	if chunkSize > l.size {
		chunkSize = l.size
	}
	ck := chunker{limit: chunkSize}
	prevEnd := l.dataStart
	for k := uint64(0); k < n; k++ {
		rec := b[cachePrefix+k*cacheRecord:]
		q := seqInfo{key: le.Uint64(rec[0:]), samples: int64(le.Uint32(rec[8:])), start: int64(le.Uint64(rec[16:]))}
		q.end = q.start + int64(le.Uint32(rec[24:]))
		if q.start < prevEnd || q.end <= q.start || q.end > l.size || q.samples == 0 || checkSequence(q, frameMode) != nil {
			return nil, false
		}
		// A sequence starts at the file's first data byte or right after a newline.
		if q.start != l.dataStart && data[q.start-1] != '\n' {
			return nil, false
		}
		line := int64(-1)
		if !l.ids {
			line = int64(q.key)
		}
		ck.add(q, line)
		prevEnd = q.end
	}
	if n == 0 || !dropping && prevEnd != l.size {
		return nil, false
	}
	return ck.chunks, true
}
