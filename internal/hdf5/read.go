package hdf5

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mlfeed/mlfeed/internal/sched"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
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
// n*RowLen() elements of Type.Size bytes. Numbers are converted to little-endian, and integers
// narrower than their bytes (Datatype.Bits) widened as h5py reads them; strings of fixed
// length are copied as stored, variable-length ones are their global heap references
// (Dataset.VarStrings reads them).
func (d *Dataset) ReadRows(dst []byte, row, n uint64) error {
	return d.ReadRowsContext(context.Background(), dst, row, n)
}

// ReadRowsContext is ReadRows with its work spread over the threads of the scheduler ctx
// carries (internal/sched), if any: chunks are decoded in parallel, contiguous data is read in
// pieces in parallel. No goroutine is started beyond the scheduler's helpers.
func (d *Dataset) ReadRowsContext(ctx context.Context, dst []byte, row, n uint64) error {
	es := uint64(d.Type.Size)
	rl := d.RowLen()
	if row > d.Rows() || n > d.Rows()-row {
		return fmt.Errorf("%w: rows [%d, %d) of dataset %s, which has %d", ErrFormat, row, row+n, d.path, d.Rows())
	}
	if uint64(len(dst)) != n*rl*es {
		return fmt.Errorf("hdf5: ReadRows of %d rows of %d elements of %d bytes into %d bytes", n, rl, es, len(dst))
	}
	if n == 0 || rl == 0 {
		return nil
	}
	start := row * rl * es
	conv := d.Type.converts()
	switch d.layout {
	case layoutCompact:
		copy(dst, d.compact[start:])
	case layoutContiguous:
		if d.addr == undef {
			d.fillBytes(dst)
			break
		}
		// pieces of a whole number of elements, read (and converted) in parallel
		piece := max(readPiece/es, 1) * es
		pieces := (uint64(len(dst)) + piece - 1) / piece
		return sched.Parallel(ctx, int(pieces), func(_ context.Context, i int) error {
			lo := uint64(i) * piece
			b := dst[lo:min(lo+piece, uint64(len(dst)))]
			if err := d.f.readInto(b, d.addr+start+lo, "data of "+d.path); err != nil {
				return err
			}
			if conv {
				d.Type.toLE(b)
			}
			return nil
		})
	case layoutChunked:
		return d.readChunked(ctx, dst, row, n)
	}
	if conv {
		d.Type.toLE(dst)
	}
	return nil
}

// readPiece is the size of the pieces contiguous data is read in.
const readPiece = 8 << 20

func (d *Dataset) fillBytes(dst []byte) {
	if d.fill == nil {
		clear(dst)
		return
	}
	// one element, then doubling copies
	n := copy(dst, d.fill)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
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
	reg       []uint64
	zr        io.ReadCloser
	br        bytes.Reader
	zd        *zstd.Decoder // decodes at most zdMax bytes (the largest dst yet, 1 KiB at least), all at once
	zdMax     int
	zs        *zstd.Decoder // decodes a stream
	bs        []byte        // one block of bitshuffled elements (LZ4's or Zstandard's), of a Blosc frame, or an szip chunk's byte planes
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow(b []byte, n uint64) []byte {
	if uint64(cap(b)) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// region is the scratch state of one chunk's copy.
type region struct {
	sc, lo, hi, idx []uint64
}

// readChunked reads rows [row, row+n) of a chunked dataset, decoding its chunks in parallel
// and converting the elements as ReadRows says (each chunk's part as it lands).
func (d *Dataset) readChunked(ctx context.Context, dst []byte, row, n uint64) error {
	if err := d.loadIndex(); err != nil {
		return err
	}
	rank := len(d.chunk)
	strides := make([]uint64, 2*rank)
	cstride, dstride := strides[:rank], strides[rank:]
	cstride[rank-1], dstride[rank-1] = 1, 1
	for i := rank - 2; i >= 0; i-- {
		cstride[i] = cstride[i+1] * d.chunk[i+1]
		dstride[i] = dstride[i+1] * d.Dims[i+1]
	}
	first, last := row/d.chunk[0], (row+n-1)/d.chunk[0]
	// the chunks the rows cross: (last-first+1) slabs of every chunk of dims 1..
	per := uint64(1)
	for _, g := range d.grid[1:] {
		per *= g
	}
	count := (last - first + 1) * per
	// Chunks never written stand for fill values. When they are most of the region (a forged
	// grid of tiny chunks, or a sparse dataset), dst is filled at once and only the chunks
	// stored are visited, so that the work follows the chunks the file holds.
	var keys []uint64
	if present := uint64(len(d.chunks)); count > 4*present+64 {
		keys = make([]uint64, 0, min(present, count))
		for k := range d.chunks {
			if s0 := k / per; s0 >= first && s0 <= last {
				keys = append(keys, k)
			}
		}
		d.f.work.Add(present)
		d.fillBytes(dst)
		if d.Type.converts() {
			d.Type.toLE(dst)
		}
		count = uint64(len(keys))
	}
	d.f.work.Add(count)
	limit := MemoryLimit(ctx)
	return sched.Parallel(ctx, int(count), func(_ context.Context, t int) error {
		s := scratchPool.Get().(*scratch)
		defer scratchPool.Put(s)
		if cap(s.reg) < 4*rank {
			s.reg = make([]uint64, 4*rank)
		}
		all := s.reg[:4*rank]
		g := &region{sc: all[:rank], lo: all[rank : 2*rank], hi: all[2*rank : 3*rank], idx: all[3*rank:]}
		// chunk t in row-major order over the slabs, or the t-th stored chunk
		rem := uint64(t) + first*per
		if keys != nil {
			rem = keys[t]
		}
		for i := rank - 1; i > 0; i-- {
			g.sc[i] = rem % d.grid[i]
			rem /= d.grid[i]
		}
		g.sc[0] = rem
		return d.copyChunk(s, g, cstride, dstride, dst, row, n, limit)
	})
}

// copyChunk copies the part of chunk g.sc inside rows [row, row+n) to dst, converting the
// elements as ReadRows says (Datatype.toLE).
func (d *Dataset) copyChunk(s *scratch, g *region, cstride, dstride []uint64, dst []byte, row, n uint64, limit int64) error {
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
	// a chunk that lands in dst as one run (whole rows of the dataset) is decoded straight
	// into it
	direct := r0 == lo[0] && r1 == lo[0]+d.chunk[0]
	for i := 1; i < rank && direct; i++ {
		direct = d.chunk[i] == d.Dims[i]
	}
	rowBytes := es
	for _, x := range d.Dims[1:] {
		rowBytes *= x
	}
	// Filtered chunks, and chunks copied through scratch memory, take memory for the whole
	// chunk, whatever the file's size: that is checked against the budget before allocating.
	if ok && (!direct || d.filtered(loc)) && d.chunkBytes > uint64(limit) {
		return d.f.errAt(loc.addr, "chunk of "+d.path, ErrTooLarge,
			"one chunk %v decodes to %d bytes, more than the memory budget of %d bytes allows (raise it with --memory)", d.chunk, d.chunkBytes, limit)
	}
	var out []byte
	if direct {
		out = dst[(r0-row)*rowBytes : (r1-row)*rowBytes : (r1-row)*rowBytes]
	} else {
		s.raw = grow(s.raw, d.chunkBytes)
		out = s.raw
	}
	conv := d.Type.converts()
	if !ok {
		if !direct {
			// fill only the part of dst this chunk covers
			out = nil
		} else {
			d.fillBytes(out)
			if conv {
				d.Type.toLE(out)
			}
			return nil
		}
	} else if err := d.decodeChunk(s, out, loc, edge); err != nil {
		return err
	}
	if conv && out != nil {
		// the whole chunk when it went to scratch: a partial chunk's copies are then in order
		d.Type.toLE(out)
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
			co += (idx[i] - sc[i]*d.chunk[i]) * cstride[i]
			if i == 0 {
				do += (idx[i] - row) * dstride[i]
			} else {
				do += idx[i] * dstride[i]
			}
		}
		if out == nil {
			d.fillBytes(dst[do*es : do*es+run])
			if conv {
				d.Type.toLE(dst[do*es : do*es+run])
			}
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

// filtered reports whether the stored chunk at loc has a filter to undo.
func (d *Dataset) filtered(loc chunkLoc) bool {
	for i := range d.filters {
		if loc.mask&(1<<i) == 0 {
			return true
		}
	}
	return false
}

// MemoryLimit returns the most memory one decoded chunk may take when reading with ctx: the
// memory budget of the scheduler ctx carries (internal/sched; the CLI's --memory), or
// sched.DefaultMemory (2 GiB) without one. A chunk that decodes to more is refused with
// ErrTooLarge before anything is allocated for it.
func MemoryLimit(ctx context.Context) int64 {
	if s := sched.FromContext(ctx); s != nil {
		return s.Memory()
	}
	return sched.DefaultMemory
}

// decodeChunk reads the stored chunk at loc and undoes its filters into out (chunkBytes long).
func (d *Dataset) decodeChunk(s *scratch, out []byte, loc chunkLoc, edge bool) error {
	f := d.f
	where := fmt.Sprintf("chunk of %s", d.path)
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
	s.a = grow(s.a, loc.size)
	if err := f.readInto(s.a, loc.addr, where); err != nil {
		return err
	}
	// the stages between the first and the last write to scratch buffers, grown when needed:
	// a chunk with one filter takes no memory beyond its stored bytes
	bufs := [2]*[]byte{&s.a, &s.b}
	cur, which := s.a, 0
	remaining := active
	for i := len(filters) - 1; i >= 0; i-- {
		if loc.mask&(1<<i) != 0 {
			continue
		}
		remaining--
		next := out
		if remaining > 0 && filters[i].id != 3 {
			p := bufs[1-which]
			*p = grow(*p, uint64(len(out)))
			next = *p
		}
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
		case 1, filterSzip, filterLZF, filterLZO, filterLZ4, filterBzip2, filterZstd, filterBitshuffle, filterBlosc, filterNbit, filterScaleOffset:
			var err error
			switch filters[i].id {
			case 1:
				k, err = s.inflate(next, cur)
			case filterLZF:
				k, err = lzfDecode(next, cur)
			case filterLZO:
				k, err = lzoDecode(next, cur)
			case filterLZ4:
				k, err = lz4Decode(next, cur)
			case filterBzip2:
				k, err = bzip2Decode(next, cur)
			case filterBitshuffle:
				k, err = s.bitshuffleDecode(next, cur, filters[i].params)
			case filterBlosc:
				k, err = s.bloscDecode(next, cur)
			case filterNbit:
				k, err = nbitDecode(next, cur, filters[i].nbit)
			case filterScaleOffset:
				k, err = soDecode(next, cur, filters[i].so)
			case filterSzip:
				k, err = s.szipDecode(next, cur, filters[i].params)
			default:
				k, err = s.zstdDecode(next, cur)
			}
			if errors.Is(err, errOverrun) {
				return f.errAt(loc.addr, where, ErrFormat, "%s: chunk decodes to more than the %d bytes expected", filters[i].name, len(out))
			}
			if err != nil {
				return f.errAt(loc.addr, where, ErrFormat, "%s: %v", filters[i].name, err)
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

// inflate decompresses the zlib stream src into dst and returns the bytes written; a stream
// that holds more than dst is errOverrun. The zlib header
// and the Adler-32 checksum of the data are checked here (the checksum with a faster loop
// than hash/adler32's); the deflate stream itself is klauspost/compress's.
func (s *scratch) inflate(dst, src []byte) (int, error) {
	if len(src) < 2+4 {
		return 0, io.ErrUnexpectedEOF
	}
	h := uint16(src[0])<<8 | uint16(src[1])
	if src[0]&0x0f != 8 || src[0]>>4 > 7 || h%31 != 0 {
		return 0, zlib.ErrHeader
	}
	if src[1]&0x20 != 0 {
		return 0, zlib.ErrDictionary
	}
	s.br.Reset(src[2:])
	if s.zr == nil {
		s.zr = flate.NewReader(&s.br)
	} else if err := s.zr.(flate.Resetter).Reset(&s.br, nil); err != nil {
		return 0, err
	}
	k, err := readExactly(s.zr, dst)
	if err != nil {
		return k, err
	}
	// the deflate stream has ended where the bytes reader stands: the checksum follows
	var sum [4]byte
	if _, err := io.ReadFull(&s.br, sum[:]); err != nil {
		return k, io.ErrUnexpectedEOF
	}
	if uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) != adler32(dst[:k]) {
		return k, zlib.ErrChecksum
	}
	return k, nil
}

// adler32 returns the Adler-32 checksum of b (RFC 1950), eight bytes a step: for bytes
// x0..x7, s1 gains their sum and s2 gains 8*s1 plus the sum of (8-i)*xi, which is what eight
// byte steps add. Both sums come from multiplications of the word's even and odd bytes, spread
// into 16-bit lanes, by constants whose lanes are the weights: the top lane of the product
// collects the weighted sum (at most 255*20, no carry out of it). Sums are reduced modulo 65521
// every 5552 bytes, as zlib does.
func adler32(b []byte) uint32 {
	const (
		mod, nmax = 65521, 5552 &^ 7
		lanes     = 0x00ff00ff00ff00ff
		ones      = 0x0001000100010001
		evenW     = 8<<48 | 6<<32 | 4<<16 | 2 // bytes 0, 2, 4, 6 weigh 8, 6, 4, 2
		oddW      = 7<<48 | 5<<32 | 3<<16 | 1 // bytes 1, 3, 5, 7 weigh 7, 5, 3, 1
	)
	s1, s2 := uint32(1), uint32(0)
	for len(b) > 0 {
		p := b[:min(len(b), nmax)]
		b = b[len(p):]
		for len(p) >= 8 {
			x := binary.LittleEndian.Uint64(p)
			e, o := x&lanes, (x>>8)&lanes
			s2 += 8*s1 + uint32((e*evenW)>>48) + uint32((o*oddW)>>48)
			s1 += uint32(((e + o) * ones) >> 48)
			p = p[8:]
		}
		for _, c := range p {
			s1 += uint32(c)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
	}
	return s2<<16 | s1
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
