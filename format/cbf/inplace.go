package cbf

import (
	"fmt"
	"io"
	"runtime"
	"weak"

	"github.com/mlfeed/mlfeed"
)

// Chunks read with ReadAt (an object in object storage, a file opened with NoMmap) whose
// streams are all dense are decoded in the memory their bytes were read into: each stream's
// values are moved to the front, over the length table and the sample counts, so that a chunk
// costs one allocation and no copy to new memory (on a fresh process, new memory costs a page
// fault per page). ReadChunkReuse reads the next chunk into the memory of such a chunk.

// inPlaceOK reports whether every stream is dense, so that chunks are decoded in place.
func (rd *Reader) inPlaceOK() bool {
	for _, s := range rd.header.Streams {
		if s.Storage != mlfeed.Dense {
			return false
		}
	}
	return true
}

// readInPlace reads chunk i into memory of its own (prev's, when prev was decoded in place
// by this reader and its memory is large enough) and decodes it there. prev is nil or has as
// many streams as the file.
func (rd *Reader) readInPlace(i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	off, end := rd.header.Chunks[i].Offset, rd.ends[i]
	n := int(end - off)
	var buf []byte
	if prev != nil {
		if v, ok := rd.backing.LoadAndDelete(weak.Make(prev)); ok && cap(v.([]byte)) >= n {
			buf = v.([]byte)[:n]
		}
	}
	if buf == nil {
		buf = mlfeed.NewBuffer(mlfeed.Uint8, n).Bytes
	}
	got, err := rd.ra.ReadAt(buf, off)
	if got < n {
		field := fmt.Sprintf("chunk %d", i)
		if err == nil || err == io.EOF {
			return nil, rd.posErr(off+int64(got), field, ErrTruncated, "the data ends (it has %d bytes)", rd.size)
		}
		return nil, mlfeed.OffsetError(rd.name, off+int64(got), field, err)
	}
	d := decoder{rd: rd, chunk: i, b: buf, base: off, prev: prev}
	c, err := d.inPlace()
	if err != nil {
		return nil, err
	}
	// Remember the memory for ReadChunkReuse, for as long as the chunk is reachable.
	wp, m := weak.Make(c), &rd.backing
	m.Store(wp, buf[:cap(buf)])
	runtime.AddCleanup(c, func(wp weak.Pointer[mlfeed.Chunk]) { m.Delete(wp) }, wp)
	return c, nil
}

// inPlace decodes a chunk of dense streams as decode does, with the same checks and errors,
// moving each stream's values to the front of d.b: stream k's values follow stream k-1's,
// at an offset aligned to its element size. Every move is to an offset no greater than the one
// it is read from (the length table and one count per sequence and stream are dropped, more
// than the at most 4 bytes of alignment before each stream), so nothing not yet read is
// overwritten.
func (d *decoder) inPlace() (*mlfeed.Chunk, error) {
	ent := d.rd.header.Chunks[d.chunk]
	nseq := int(ent.Sequences)
	lens := make([]uint32, nseq) // the length table, which the values overwrite
	var sum uint64
	for q := range lens {
		lens[q] = le.Uint32(d.b[4*q:])
		sum += uint64(lens[q])
	}
	if sum != uint64(ent.Samples) {
		return nil, d.fail(0, "sequence lengths", ErrFormat, "they add up to %d samples, the chunk table says %d", sum, ent.Samples)
	}
	c := &mlfeed.Chunk{Sequences: nseq, Streams: make([]mlfeed.StreamData, len(d.rd.header.Streams))}
	p, w := 4*nseq, 0 // read and write offsets
	for k := range d.rd.header.Streams {
		st := &d.rd.header.Streams[k]
		per := int64(st.Dim) * int64(st.Type.Size())
		if a := st.Type.Size(); w%a != 0 {
			w += a - w%a
		}
		out := &c.Streams[k]
		out.SeqStart = int64s(d.old(k).SeqStart, nseq+1)
		out.SeqStart[0] = 0
		from := w
		for q := range nseq {
			if len(d.b)-p < 4 {
				return nil, d.fail(p, d.field(k, q, "nSamples"), ErrTruncated, "the chunk ends")
			}
			n := int64(le.Uint32(d.b[p:]))
			if left := int64(len(d.b) - p - 4); n > left/per {
				return nil, d.fail(p, d.field(k, q, "nSamples"), ErrTooLarge, "%d samples of %d bytes each, the chunk has %d bytes left", n, per, left)
			}
			out.SeqStart[q+1] = out.SeqStart[q] + n
			end := p + 4 + int(n*per)
			w += copy(d.b[w:], d.b[p+4:end])
			p = end
		}
		out.Values = mlfeed.Buffer{Type: st.Type, Bytes: d.b[from:w:w]}
	}
	for q, l := range lens {
		var longest int64
		for k := range c.Streams {
			longest = max(longest, c.Streams[k].SeqStart[q+1]-c.Streams[k].SeqStart[q])
		}
		if int64(l) != longest {
			return nil, d.fail(4*q, fmt.Sprintf("sequence %d length", q), ErrFormat, "the length table says %d samples, the longest stream has %d", l, longest)
		}
	}
	if d.rd.strict && p != len(d.b) {
		return nil, d.fail(p, "end", ErrFormat, "%d bytes after the last stream's data", len(d.b)-p)
	}
	return c, nil
}
