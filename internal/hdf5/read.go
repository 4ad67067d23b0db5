package hdf5

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// RowLen returns the number of elements in one row (one index of the first dimension); 1 for a
// scalar or one-dimensional dataset.
func (d *Dataset) RowLen() uint64 {
	n := uint64(1)
	for _, x := range d.Dims[min(1, len(d.Dims)):] {
		n *= x
	}
	return n
}

// Rows returns the size of the first dimension (1 for a scalar).
func (d *Dataset) Rows() uint64 {
	if len(d.Dims) == 0 {
		return 1
	}
	return d.Dims[0]
}

// ReadRows reads rows [row, row+n) of the first dimension into dst, which must hold exactly
// n*RowLen() elements of Type.Size bytes. Numbers are converted to little-endian; strings
// (fixed-length) are copied as stored.
func (d *Dataset) ReadRows(dst []byte, row, n uint64) error {
	es := uint64(d.Type.Size)
	rl := d.RowLen()
	if d.Type.Class == VarString {
		return fmt.Errorf("%w: dataset %s holds variable-length strings", ErrUnsupported, d.obj.path)
	}
	if row > d.Rows() || n > d.Rows()-row {
		return fmt.Errorf("%w: rows [%d, %d) of dataset %s, which has %d", ErrFormat, row, row+n, d.obj.path, d.Rows())
	}
	if uint64(len(dst)) != n*rl*es {
		return fmt.Errorf("hdf5: ReadRows of %d rows of %d elements of %d bytes into %d bytes", n, rl, es, len(dst))
	}
	if n == 0 || rl == 0 {
		return nil
	}
	start := row * rl * es
	switch d.layout {
	case layoutCompact:
		copy(dst, d.compact[start:])
	case layoutContiguous:
		if d.addr == undef {
			d.fillBytes(dst)
		} else if err := d.f.readInto(dst, d.addr+start, "data of "+d.obj.path); err != nil {
			return err
		}
	case layoutChunked:
		if err := d.readChunked(dst, row, n); err != nil {
			return err
		}
	}
	if d.Type.BigEndian && d.Type.Class != String {
		swap(dst, int(es))
	}
	return nil
}

func (d *Dataset) fillBytes(dst []byte) {
	if d.fill == nil {
		clear(dst)
		return
	}
	for i := 0; i < len(dst); i += len(d.fill) {
		copy(dst[i:], d.fill)
	}
}

// swap reverses the bytes of each size-byte element.
func swap(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			b[i], b[i+1], b[i+2], b[i+3], b[i+4], b[i+5], b[i+6], b[i+7] = b[i+7], b[i+6], b[i+5], b[i+4], b[i+3], b[i+2], b[i+1], b[i]
		}
	}
}

// scratch holds the buffers of one chunk decode.
type scratch struct {
	raw, a, b []byte
	zr        io.ReadCloser
	br        bytes.Reader
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow(b []byte, n uint64) []byte {
	if uint64(cap(b)) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// region is the scratch state of one ReadRows over chunks.
type region struct {
	sc, lo, hi, idx, cstride, dstride []uint64
}

func (d *Dataset) readChunked(dst []byte, row, n uint64) error {
	if err := d.loadIndex(); err != nil {
		return err
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	rank := len(d.chunk)
	g := &region{}
	all := make([]uint64, 6*rank)
	g.sc, g.lo, g.hi, g.idx, g.cstride, g.dstride = all[:rank], all[rank:2*rank], all[2*rank:3*rank], all[3*rank:4*rank], all[4*rank:5*rank], all[5*rank:]
	g.cstride[rank-1], g.dstride[rank-1] = 1, 1
	for i := rank - 2; i >= 0; i-- {
		g.cstride[i] = g.cstride[i+1] * d.chunk[i+1]
		g.dstride[i] = g.dstride[i+1] * d.Dims[i+1]
	}
	first, last := row/d.chunk[0], (row+n-1)/d.chunk[0]
	sc := g.sc
	sc[0] = first
	for {
		if err := d.copyChunk(s, g, dst, row, n); err != nil {
			return err
		}
		// next chunk: odometer over dims 1.., then dim 0
		for i := rank - 1; ; i-- {
			sc[i]++
			lim := d.grid[i]
			if i == 0 {
				lim = last + 1
			}
			if sc[i] < lim {
				break
			}
			if i == 0 {
				return nil
			}
			sc[i] = 0
		}
	}
}

// copyChunk copies the part of chunk g.sc inside rows [row, row+n) to dst.
func (d *Dataset) copyChunk(s *scratch, g *region, dst []byte, row, n uint64) error {
	rank := len(d.chunk)
	es := uint64(d.Type.Size)
	sc, lo, hi := g.sc, g.lo, g.hi
	k, _ := d.key(sc)
	// element-space extent of the chunk, clipped to the dataset and the requested rows
	edge := false
	for i := range sc {
		lo[i] = sc[i] * d.chunk[i]
		hi[i] = min(lo[i]+d.chunk[i], d.Dims[i])
		if hi[i]-lo[i] != d.chunk[i] {
			edge = true
		}
	}
	r0, r1 := max(lo[0], row), min(hi[0], row+n)
	loc, ok := d.chunks[k]
	// a chunk that lands in dst as one run is decoded straight into it
	direct := rank == 1 && r0 == lo[0] && r1 == lo[0]+d.chunk[0]
	var out []byte
	if direct {
		out = dst[(r0-row)*es : (r1-row)*es]
	} else {
		s.raw = grow(s.raw, d.chunkBytes)
		out = s.raw
	}
	if !ok {
		if !direct {
			// fill only the part of dst this chunk covers
			out = nil
		} else {
			d.fillBytes(out)
			return nil
		}
	} else if err := d.decodeChunk(s, out, loc, edge); err != nil {
		return err
	}
	if direct {
		return nil
	}
	// copy runs along the last dimension
	lo[0], hi[0] = r0, r1
	run := (hi[rank-1] - lo[rank-1]) * es
	idx := g.idx
	copy(idx, lo)
	for {
		var co, do uint64
		for i := 0; i < rank; i++ {
			co += (idx[i] - sc[i]*d.chunk[i]) * g.cstride[i]
			if i == 0 {
				do += (idx[i] - row) * g.dstride[i]
			} else {
				do += idx[i] * g.dstride[i]
			}
		}
		if out == nil {
			d.fillBytes(dst[do*es : do*es+run])
		} else {
			copy(dst[do*es:do*es+run], out[co*es:co*es+run])
		}
		i := rank - 2
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < hi[i] {
				break
			}
			idx[i] = lo[i]
		}
		if i < 0 {
			return nil
		}
	}
}

// decodeChunk reads the stored chunk at loc and undoes its filters into out (chunkBytes long).
func (d *Dataset) decodeChunk(s *scratch, out []byte, loc chunkLoc, edge bool) error {
	f := d.f
	where := fmt.Sprintf("chunk of %s", d.obj.path)
	filters := d.filters
	if edge && d.partialRaw {
		filters = nil
	}
	active := 0
	for i := range filters {
		if loc.mask&(1<<i) == 0 {
			active++
		}
	}
	if active == 0 {
		if loc.size != uint64(len(out)) {
			return f.errAt(loc.addr, where, ErrFormat, "unfiltered chunk of %d bytes where %d are expected", loc.size, len(out))
		}
		return f.readInto(out, loc.addr, where)
	}
	if loc.size > uint64(f.size) {
		return f.errAt(loc.addr, where, ErrTruncated, "chunk of %d bytes", loc.size)
	}
	s.a = grow(s.a, max(loc.size, uint64(len(out))))[:loc.size]
	if err := f.readInto(s.a, loc.addr, where); err != nil {
		return err
	}
	bufs := [2][]byte{s.a, grow(s.b, uint64(len(out)))}
	s.b = bufs[1]
	cur, which := s.a, 0
	remaining := active
	for i := len(filters) - 1; i >= 0; i-- {
		if loc.mask&(1<<i) != 0 {
			continue
		}
		remaining--
		next := bufs[1-which]
		if remaining == 0 {
			next = out
		}
		next = next[:cap(next)]
		var k int
		switch filters[i].id {
		case 3: // fletcher32
			if len(cur) < 4 {
				return f.errAt(loc.addr, where, ErrFormat, "chunk too short for its Fletcher-32 checksum")
			}
			body := cur[:len(cur)-4]
			stored := uint32(le(cur[len(cur)-4:]))
			sum := fletcher32(body)
			rev := sum>>24 | (sum>>8)&0xff00 | (sum<<8)&0xff0000 | sum<<24
			if stored != sum && stored != rev {
				return f.errAt(loc.addr, where, ErrFormat, "Fletcher-32 checksum mismatch (stored %#x, computed %#x)", stored, sum)
			}
			if remaining > 0 {
				cur = body
				continue
			}
			if len(body) > len(next) {
				return f.errAt(loc.addr, where, ErrFormat, "chunk holds %d bytes where %d are expected", len(body), len(out))
			}
			k = copy(next, body)
		case 1: // deflate
			var err error
			if k, err = s.inflate(next, cur); err != nil {
				return f.errAt(loc.addr, where, ErrFormat, "deflate: %v", err)
			}
			if k > len(out) {
				return f.errAt(loc.addr, where, ErrFormat, "chunk inflates to more than the %d bytes expected", len(out))
			}
		case 2: // shuffle
			size := d.Type.Size
			if p := filters[i].params; len(p) > 0 && p[0] > 0 && p[0] <= 1<<16 {
				size = int(p[0])
			}
			if len(cur) > len(next) {
				return f.errAt(loc.addr, where, ErrFormat, "shuffled chunk of %d bytes where %d are expected", len(cur), len(out))
			}
			k = len(cur)
			unshuffle(next[:k], cur, size)
		}
		cur = next[:k]
		which = 1 - which
	}
	if len(cur) != len(out) {
		return f.errAt(loc.addr, where, ErrFormat, "chunk decodes to %d bytes where %d are expected", len(cur), len(out))
	}
	return nil
}

// inflate decompresses the zlib stream src into dst, which must be exactly filled; it returns
// the number of bytes the stream held (up to len(dst)+1, to detect overruns).
func (s *scratch) inflate(dst, src []byte) (int, error) {
	s.br.Reset(src)
	var err error
	if s.zr == nil {
		s.zr, err = zlib.NewReader(&s.br)
	} else {
		err = s.zr.(zlib.Resetter).Reset(&s.br, nil)
	}
	if err != nil {
		return 0, err
	}
	k, err := io.ReadFull(s.zr, dst)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return k, nil
	}
	if err != nil {
		return k, err
	}
	var one [1]byte
	if m, _ := s.zr.Read(one[:]); m > 0 {
		return k + 1, nil
	}
	return k, nil
}

// unshuffle reverses HDF5's shuffle filter: all first bytes, then all second bytes, ...
func unshuffle(dst, src []byte, size int) {
	if size <= 1 {
		copy(dst, src)
		return
	}
	n := len(src) / size
	for j := 0; j < size; j++ {
		in := src[j*n : (j+1)*n]
		for i, c := range in {
			dst[i*size+j] = c
		}
	}
	copy(dst[n*size:], src[n*size:])
}
