package minibatch

import (
	"slices"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/byteswap"
)

// RawSampler is what a Source offers when the samples of its chunks lie in memory it holds (a
// mapped file, or data read into memory) at a fixed stride, one fixed-size dense sample per
// sequence: the engine then packs minibatches straight from that memory, byte-swapping
// big-endian values as it copies them, and decodes no chunk. A randomized sweep then costs
// what a sweep in file order does (no decoded chunk goes out to memory and back), and the
// first sweep needs no memory for decoded chunks. format/idx (plain or gzip files) and
// format/cbf (mapped files of one-sample sequences) implement it; every Source keeps the
// ReadChunk path, which the engine uses for any chunk RawSamples does not describe.
//
// RawSamples reports where chunk's samples of stream lie: sample q's bytes are
// b[off+q*stride : off+q*stride+size], size being the stream's Dim times its element size,
// with each element's bytes in reverse order when swap is the element size (big-endian data),
// as they are when swap is 0. b must stay valid and unchanged until the source is closed. ok
// false means the chunk must be read (the engine then calls ReadChunkReuse, which reports
// any error). It may read mapped memory: the engine calls it under internal/mmap's fault
// guard, on a thread of its scheduler, where it may also populate the chunk's pages.
type RawSampler interface {
	RawSamples(chunk, stream int) (b []byte, off, stride, swap int, ok bool)
}

// rawView is where a raw chunk's samples of one stream lie (RawSampler).
type rawView struct {
	b                 []byte
	off, stride, swap int
}

// rawChunk is a chunk packed straight from the source's memory: a chunk holding only the
// offsets (every sequence one sample), and the views its samples are copied from.
type rawChunk struct {
	chunk *mlfeed.Chunk
	views []rawView
	unit  []bool
}

// rawOf returns chunk c as a raw chunk, or nil when the source does not describe it so (or
// the description does not hold). It is built once per chunk and kept: the views stay valid
// while the source is open, so loading the chunk again costs nothing.
func (r *Reader) rawOf(c int32) *rawChunk {
	if r.raw == nil {
		return nil
	}
	if rc := r.rawChunks[c].Load(); rc != nil {
		return rc
	}
	n := r.infos[c].Sequences
	if r.infos[c].Samples != int64(n) || n+1 > len(r.identity) {
		return nil
	}
	rc := &rawChunk{
		chunk: &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(r.schema.Streams))},
		views: make([]rawView, len(r.schema.Streams)),
		unit:  make([]bool, len(r.schema.Streams)),
	}
	for k := range r.schema.Streams {
		st := &r.schema.Streams[k]
		if st.Storage != mlfeed.Dense || st.Dim <= 0 || st.Type == mlfeed.String || st.Type.Size() <= 0 {
			return nil
		}
		b, off, stride, swap, ok := r.raw.RawSamples(int(c), k)
		size := int64(st.Dim) * int64(st.Type.Size())
		if !ok || off < 0 || int64(stride) < size || swap != 0 && (swap != st.Type.Size() || swap == 1) ||
			n > 0 && int64(off)+int64(n-1)*int64(stride)+size > int64(len(b)) {
			return nil
		}
		rc.chunk.Streams[k] = mlfeed.StreamData{SeqStart: r.identity[: n+1 : n+1], Values: mlfeed.Buffer{Type: st.Type, Bytes: b}}
		rc.views[k] = rawView{b, off, stride, swap}
		rc.unit[k] = true
	}
	r.rawChunks[c].Store(rc)
	return rc
}

// appendRaw appends sample q of view v, size bytes, to dst, in the data model's byte order.
func appendRaw(dst []byte, v *rawView, q, size int) []byte {
	from := v.off + q*v.stride
	seg := v.b[from : from+size]
	if v.swap == 0 {
		return append(dst, seg...)
	}
	n := len(dst)
	dst = slices.Grow(dst, size)[:n+size]
	byteswap.Into(dst[n:], seg, v.swap)
	return dst
}
