package mds

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/half"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// ReadChunkReuse decodes chunk i into prev's memory when it can. Text and bytes values point
// into the shard's memory (mapped, or decompressed), which stays valid until Close.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (c *mlfeed.Chunk, err error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("mds: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sh := rd.shards[rd.chShard[i]]
	data, err := rd.load(sh)
	if err != nil {
		return nil, err
	}
	n := rd.chunks[i].Sequences
	c = rd.newChunk(n, prev)
	defer mmap.Recover(mmap.Catch(), &err)
	first := int(rd.chFirst[i])
	if sh.stride != 0 && rd.uniformOnly() {
		rd.decodeUniform(c, data, first, n, sh.stride)
		return c, nil
	}
	pos := make([]int, len(rd.cols)+1)
	for k := first; k < first+n; k++ {
		s, e := sampleAt(data, k)
		smp := data[s:e]
		if err := rd.locate(smp, pos); err != nil {
			return nil, rd.sampleError(sh, int64(k), s, "", err)
		}
		for ci := range rd.cols {
			if err := rd.decodeColumn(c, ci, smp[pos[ci]:pos[ci+1]]); err != nil {
				return nil, rd.sampleError(sh, int64(k), s+pos[ci], rd.cols[ci].name, err)
			}
		}
	}
	return c, nil
}

// uniformOnly reports whether every column is numbers stored as read, so that a shard of
// samples of one size decodes column by column.
func (rd *Reader) uniformOnly() bool {
	for _, col := range rd.cols {
		if (col.kind != kScalar && col.kind != kNDFixed) || col.esize != col.typ.Size() {
			return false
		}
	}
	return true
}

// decodeUniform copies the columns of n samples of stride bytes from sample first.
func (rd *Reader) decodeUniform(c *mlfeed.Chunk, data []byte, first, n, stride int) {
	base, _ := sampleAt(data, first)
	for ci := range rd.cols {
		d := &c.Streams[rd.first[ci]]
		sz := rd.cols[ci].size
		out := grow(d.Values.Bytes, n*sz)
		src := data[base+rd.coloff[ci]:] // checkHeader found every sample stride bytes long
		for k := 0; k < n; k++ {
			copy(out[k*sz:k*sz+sz], src[k*stride:])
		}
		d.Values.Bytes = out
		for k := 1; k <= n; k++ {
			d.SeqStart = append(d.SeqStart, int64(k))
		}
	}
}

// grow returns b resized to n bytes, reusing its memory when it is large enough.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// newChunk returns an empty chunk of n sequences, reusing prev's buffers.
func (rd *Reader) newChunk(n int, prev *mlfeed.Chunk) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(rd.schema.Streams))}
	for s, st := range rd.schema.Streams {
		var old mlfeed.StreamData
		if prev != nil && len(prev.Streams) == len(rd.schema.Streams) {
			old = prev.Streams[s]
		}
		c.Streams[s] = mlfeed.ReuseStream(old, st.Type, st.Dim == 0 && st.Shape == nil)
	}
	return c
}

// decodeColumn appends column ci's value v of one sample to the chunk.
func (rd *Reader) decodeColumn(c *mlfeed.Chunk, ci int, v []byte) error {
	col := &rd.cols[ci]
	d := &c.Streams[rd.first[ci]]
	switch col.kind {
	case kScalar, kNDFixed:
		if col.esize == 2 && col.typ == mlfeed.Float32 {
			d.Values.Bytes = half.AppendWiden(d.Values.Bytes, v)
		} else {
			d.Values.Bytes = append(d.Values.Bytes, v...)
		}
	case kFloat16:
		d.Values.Bytes = half.AppendWiden(d.Values.Bytes, v)
	case kText:
		if !utf8.Valid(v) {
			return fmt.Errorf("%w: %s text is not UTF-8", ErrFormat, col.enc)
		}
		d.Values.Strings = append(d.Values.Strings, str(v))
	case kBytes:
		d.Values.Strings = append(d.Values.Strings, str(v))
	case kStrInt:
		x, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return fmt.Errorf("%w: str_int %q does not fit int64", ErrUnsupported, v)
			}
			return fmt.Errorf("%w: str_int %q is not an integer", ErrFormat, v)
		}
		d.Values.Bytes = binary.LittleEndian.AppendUint64(d.Values.Bytes, uint64(x))
	case kStrFloat:
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return fmt.Errorf("%w: str_float %q does not fit float64", ErrUnsupported, v)
			}
			return fmt.Errorf("%w: str_float %q is not a number", ErrFormat, v)
		}
		d.Values.Bytes = binary.LittleEndian.AppendUint64(d.Values.Bytes, math.Float64bits(x))
	case kNDShape:
		return rd.decodeNDArray(c, ci, v)
	case kList, kArray:
		cnt, body, err := listHeader(v, col.kind)
		if err != nil {
			return err
		}
		sizes := body[:4*cnt]
		vals := body[4*cnt:]
		for e := 0; e < cnt; e++ {
			sz := int(binary.LittleEndian.Uint32(sizes[4*e:]))
			if sz > len(vals) {
				return fmt.Errorf("%w: list element %d of %d bytes, %d left", ErrTruncated, e, sz, len(vals))
			}
			d.Values.Strings = append(d.Values.Strings, str(vals[:sz]))
			vals = vals[sz:]
		}
		if len(vals) != 0 {
			return fmt.Errorf("%w: %d bytes after the list's %d elements", ErrFormat, len(vals), cnt)
		}
		d.SeqStart = append(d.SeqStart, int64(len(d.Values.Strings)))
		return nil
	}
	d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+1)
	return nil
}

// listHeader returns the element count of a list[...] or jpeg_array value and what follows
// the count (the element sizes, then the elements), checked to hold the sizes.
func listHeader(v []byte, k kind) (int, []byte, error) {
	h := 4
	if k == kList {
		h = 8 // a placeholder, then the count
	}
	if len(v) < h {
		return 0, nil, fmt.Errorf("%w: a list of %d bytes has no element count", ErrTruncated, len(v))
	}
	n := int64(binary.LittleEndian.Uint32(v[h-4:]))
	if 4*n > int64(len(v)-h) {
		return 0, nil, fmt.Errorf("%w: a list of %d elements has %d bytes for their sizes", ErrTruncated, n, len(v)-h)
	}
	return int(n), v[h:], nil
}

// decodeNDArray appends an ndarray value that carries its shape (and maybe its dtype).
func (rd *Reader) decodeNDArray(c *mlfeed.Chunk, ci int, v []byte) error {
	col := &rd.cols[ci]
	d, ds := &c.Streams[rd.first[ci]], &c.Streams[rd.first[ci]+1]
	p := 0
	if !col.dtype {
		if len(v) < 1 {
			return fmt.Errorf("%w: an ndarray without its dtype", ErrTruncated)
		}
		name, ok := dtypeCodes[v[0]]
		if !ok {
			return fmt.Errorf("%w: ndarray dtype code %d", ErrFormat, v[0])
		}
		if t := scalarTypes[name]; t != col.typ || (name == "float16") != (col.esize != t.Size()) {
			return fmt.Errorf("%w: an ndarray of %s in a column read as %s (the first sample's dtype)", ErrUnsupported, name, col.typ)
		}
		p = 1
	}
	if len(v) < p+1 {
		return fmt.Errorf("%w: an ndarray without its shape", ErrTruncated)
	}
	ndim, w := int(v[p]>>2), 1<<(v[p]&3)
	p++
	if ndim == 0 {
		return fmt.Errorf("%w: an ndarray of 0 axes", ErrFormat)
	}
	if len(v) < p+ndim*w {
		return fmt.Errorf("%w: an ndarray of %d axes has %d bytes for its shape", ErrTruncated, ndim, len(v)-p)
	}
	count := uint64(1)
	for a := 0; a < ndim; a++ {
		var x uint64
		switch w {
		case 1:
			x = uint64(v[p])
		case 2:
			x = uint64(binary.LittleEndian.Uint16(v[p:]))
		case 4:
			x = uint64(binary.LittleEndian.Uint32(v[p:]))
		default:
			x = binary.LittleEndian.Uint64(v[p:])
		}
		p += w
		if x == 0 || x > uint64(len(v)) {
			return fmt.Errorf("%w: ndarray axis %d of length %d in a value of %d bytes", ErrFormat, a, x, len(v))
		}
		count *= x
		if count > uint64(len(v)) {
			return fmt.Errorf("%w: an ndarray shape of more values than its %d bytes hold", ErrFormat, len(v))
		}
		ds.Values.Bytes = binary.LittleEndian.AppendUint64(ds.Values.Bytes, x)
	}
	body := v[p:]
	if uint64(len(body)) != count*uint64(col.esize) {
		return fmt.Errorf("%w: an ndarray of %d %s values in %d bytes", ErrFormat, count, col.typ, len(body))
	}
	if col.esize == 2 && col.typ == mlfeed.Float32 {
		d.Values.Bytes = half.AppendWiden(d.Values.Bytes, body)
	} else {
		d.Values.Bytes = append(d.Values.Bytes, body...)
	}
	d.SampleStart = append(d.SampleStart, d.SampleStart[len(d.SampleStart)-1]+int64(count))
	d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+1)
	ds.SampleStart = append(ds.SampleStart, ds.SampleStart[len(ds.SampleStart)-1]+int64(ndim))
	ds.SeqStart = append(ds.SeqStart, ds.SeqStart[len(ds.SeqStart)-1]+1)
	return nil
}

// str returns b as a string sharing its memory (the shard's, which outlives the chunk).
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
