package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// filterSzip is HDF5's built-in szip filter. HDF5 stores four parameters (cd_values): the
// options mask, the pixels per block, the bits per pixel and the pixels per scanline; a chunk
// is the decoded size (32-bit little-endian) then a CCSDS 121.0-B stream (Adaptive Entropy
// Coding, "extended Rice"), as libaec's szip-compatible SZ_BufftoBuffDecompress reads it.
const filterSzip = 4

// The bits of the szip options mask. Of them, as in libaec, only two change the stream: NN
// (the nearest-neighbour preprocessor; without it the samples are coded as they are, which is
// what EC says) and MSB (samples of 9 bits or more are big-endian; otherwise little-endian,
// what LSB says). K13, CHIP and RAW concern encoders or the original szip library; HDF5 sets
// RAW (no szip header) and K13, and LSB or MSB from the datatype's byte order.
const (
	szipK13  = 1
	szipChip = 2
	szipEC   = 4
	szipLSB  = 8
	szipMSB  = 16
	szipNN   = 32
	szipRaw  = 128
)

// szipMaxBlock is the most pixels per block HDF5 allows (its SZ_MAX_PIXELS_PER_BLOCK).
const szipMaxBlock = 32

// szipParams are the szip filter's parameters as the decoder uses them.
type szipParams struct {
	msb, nn bool
	bpp     int // bits per pixel: 1 to 32, or 64
	block   int // pixels per block: even, 2 to 32
	line    int // pixels per scanline
}

// parseSzip checks the szip filter's parameters: four of them, an even number of pixels per
// block up to 32 (what HDF5 writes; libaec would decode more), bits per pixel of 1 to 32 or
// 64, and pixels per scanline. An error names the one refused.
func parseSzip(p []uint32) (szipParams, error) {
	if len(p) != 4 {
		return szipParams{}, fmt.Errorf("%d parameters (HDF5 stores 4)", len(p))
	}
	sp := szipParams{msb: p[0]&szipMSB != 0, nn: p[0]&szipNN != 0, block: int(p[1]), bpp: int(p[2]), line: int(p[3])}
	switch {
	case p[1] < 2 || p[1] > szipMaxBlock || p[1]%2 != 0:
		return sp, fmt.Errorf("%d pixels per block (only even numbers up to %d)", p[1], szipMaxBlock)
	case p[2] == 0 || p[2] > 32 && p[2] != 64:
		return sp, fmt.Errorf("%d bits per pixel (only 1 to 32, and 64)", p[2])
	case p[3] == 0:
		return sp, errors.New("0 pixels per scanline")
	}
	return sp, nil
}

// szipSE maps a second-extension codeword m (at most 90) to the pair it codes: m is
// beta(beta+1)/2 + second where beta is the sum of the pair; start is beta(beta+1)/2.
var szipSE = func() (t [91]struct{ beta, start uint8 }) {
	m := 0
	for beta := 0; m < len(t); beta++ {
		start := beta * (beta + 1) / 2
		for j := 0; j <= beta && m < len(t); j++ {
			t[m].beta, t[m].start = uint8(beta), uint8(start)
			m++
		}
	}
	return t
}()

// szipDecode decodes one szip chunk src into dst with the filter's parameters p and returns
// the bytes written: the decoded size HDF5 put before the stream, which must fit dst.
//
// The stream is cut into blocks of p.block samples of n bits (the bits per pixel; 8 for 32-
// and 64-bit pixels, whose bytes libaec codes as planes: every pixel's first byte, then every
// second byte, ...). Blocks group into reference sample intervals (RSI) of
// ceil(line/block) blocks; where a scanline is not a whole number of blocks, each scanline is
// one RSI padded to whole blocks, and the padding is dropped here. Each block starts with an
// option id of 3 bits (n up to 8), 4 (up to 16) or 5: all ones, the samples as they are;
// 1 + k, each sample's high bits (value >> k) as a fundamental sequence (that many 0 bits,
// then a 1), then every sample's k low bits; 0 then a bit: 1 for the second extension (pairs
// of samples coded together as one fundamental sequence), 0 for zero blocks (a fundamental
// sequence counting them: 0 to 3 for 1 to 4 blocks, 4 for the rest of the RSI or of its
// 64-block segment, whichever ends first, 5 and more for as many blocks).
//
// With the NN preprocessor, each RSI's first block starts (after its option bits) with a
// reference sample of n bits, the first sample as it is; every other sample codes its
// difference from the one before, mapped to a non-negative number (libaec's szip mode always
// takes the samples as unsigned). Samples of up to 8 bits are one byte, of 9 to 16 two, of
// 17 to 32 four, big-endian with MSB in the options. Decoding stops when the chunk is full:
// the rest of a last block (padding) is not read.
func (s *scratch) szipDecode(dst, src []byte, params []uint32) (int, error) {
	p, err := parseSzip(params)
	if err != nil {
		return 0, err
	}
	if len(src) < 4 {
		return 0, io.ErrUnexpectedEOF
	}
	size := binary.LittleEndian.Uint32(src)
	if uint64(size) > uint64(len(dst)) {
		return 0, fmt.Errorf("szip header says %d bytes: %w", size, errOverrun)
	}
	out := dst[:size]
	n, planes := p.bpp, 0
	if n == 32 || n == 64 {
		planes, n = n/8, 8
		if len(out)%planes != 0 {
			return 0, fmt.Errorf("szip chunk of %d bytes is not a whole number of %d-byte pixels", len(out), planes)
		}
		s.bs = grow(s.bs, uint64(size))
		out = s.bs[:size]
	}
	d := szipDecoder{src: src[4:], n: uint(n), block: p.block, pp: p.nn, msb: p.msb, out: out}
	if err := d.run(p.line); err != nil {
		return 0, err
	}
	if planes > 0 {
		m := len(out) / planes
		for j := range planes {
			plane := out[j*m : (j+1)*m]
			for i, b := range plane {
				dst[i*planes+j] = b
			}
		}
	}
	return int(size), nil
}

// szipDecoder is the state of one szip stream's decoding.
type szipDecoder struct {
	src  []byte
	pos  int    // the next byte of src to load into acc
	acc  uint64 // the next bits of the stream from the top
	nb   uint   // the bits of acc not yet read
	past int    // zero bytes loaded after the end of src: reading them is reading past the stream

	n     uint // bits per sample
	block int  // samples per block
	pp    bool // the NN preprocessor
	msb   bool
	last  uint32 // the preprocessor's last sample
	xmax  uint32 // the largest sample: 2^n - 1
	half  uint32 // 2^(n-1)

	out      []byte
	o        int // bytes of out written
	width    int // bytes per sample
	need     int // samples to write: len(out)/width
	keep     int // samples of an RSI written, the rest padding
	pos0     int // samples of the current RSI decoded
	produced int // samples written

	blk [szipMaxBlock]uint32
}

// refill loads bytes into acc until it holds at least 57 bits, zeros past the end of src.
// (Not inlined, so that get is.)
//
//go:noinline
func (d *szipDecoder) refill() {
	if d.pos+8 <= len(d.src) {
		d.acc |= binary.BigEndian.Uint64(d.src[d.pos:]) >> d.nb
		d.pos += int(63-d.nb) >> 3
		d.nb |= 56
		return
	}
	for d.nb <= 56 {
		if d.pos < len(d.src) {
			d.acc |= uint64(d.src[d.pos]) << (56 - d.nb)
			d.pos++
		} else {
			d.past++
		}
		d.nb += 8
	}
}

// short says whether what was read runs past the end of the stream.
func (d *szipDecoder) short() bool { return 8*d.past > int(d.nb) }

var errSzipShort = fmt.Errorf("szip stream ends early: %w", io.ErrUnexpectedEOF)

// get reads k bits (1 to 32); past the end of the stream, zeros (see short).
func (d *szipDecoder) get(k uint) uint32 {
	if d.nb < k {
		d.refill()
	}
	v := uint32(d.acc >> (64 - k))
	d.acc <<= k
	d.nb -= k
	return v
}

// fs reads a fundamental sequence: the number of 0 bits before the next 1. Where the stream
// ends first, it returns 0 and short says so.
func (d *szipDecoder) fs() uint32 {
	var z uint32
	for {
		if lz := uint(bits.LeadingZeros64(d.acc)); lz < d.nb {
			d.acc <<= lz + 1
			d.nb -= lz + 1
			return z + uint32(lz)
		}
		if d.past > 0 { // nothing but zeros left
			d.acc, d.nb, d.past = 0, 0, 1
			return 0
		}
		z += uint32(d.nb)
		d.acc <<= d.nb
		d.nb = 0
		d.refill()
	}
}

// run decodes the stream into d.out, line pixels per scanline.
func (d *szipDecoder) run(line int) error {
	d.width = 1
	idLen := uint(3)
	switch {
	case d.n > 16:
		d.width, idLen = 4, 5
	case d.n > 8:
		d.width, idLen = 2, 4
	}
	uncompressed := uint32(1)<<idLen - 1
	d.xmax = uint32(uint64(1)<<d.n - 1)
	d.half = uint32(1) << (d.n - 1)
	rsi := (line + d.block - 1) / d.block // blocks per RSI
	d.keep = min(line, rsi*d.block)       // a scanline that is not whole blocks is padded to them
	d.need = len(d.out) / d.width
	if len(d.out)%d.width != 0 {
		return fmt.Errorf("szip chunk of %d bytes is not a whole number of %d-byte samples", len(d.out), d.width)
	}
	b := 0 // blocks of the RSI decoded
	for d.produced < d.need {
		if b == rsi {
			b, d.pos0 = 0, 0
		}
		ref := d.pp && b == 0
		id := d.get(idLen)
		blk := d.blk[:d.block]
		switch {
		case id == uncompressed:
			for i := range blk { // get, by hand
				if d.nb < d.n {
					d.refill()
				}
				blk[i] = uint32(d.acc >> (64 - d.n))
				d.acc <<= d.n
				d.nb -= d.n
			}
		case id == 0:
			second := d.get(1)
			i := 0
			if ref {
				blk[0], i = d.get(d.n), 1
			}
			if second == 0 {
				z := d.fs()
				if d.short() {
					return errSzipShort
				}
				zb := uint64(z) + 1 // blocks
				if zb == 5 {
					zb = uint64(min(rsi-b, 64-b%64)) // the rest of the RSI or of its segment
				} else if zb > 5 {
					zb--
				}
				if zb > uint64(rsi-b) {
					return fmt.Errorf("szip zero blocks %d past the end of their reference sample interval (%d blocks left)", zb, rsi-b)
				}
				// every difference 0: the last sample (or the reference) again
				v := uint32(0)
				if d.pp {
					if ref {
						d.last = blk[0]
					}
					v = d.last
				}
				d.emitRun(v, int(zb)*d.block)
				b += int(zb)
				continue
			}
			for i < len(blk) {
				m := d.fs()
				if m >= uint32(len(szipSE)) {
					if d.short() {
						return errSzipShort
					}
					return fmt.Errorf("szip second-extension codeword %d (at most %d)", m, len(szipSE)-1)
				}
				e := szipSE[m]
				second := m - uint32(e.start)
				if i&1 == 0 {
					blk[i] = uint32(e.beta) - second
					i++
				}
				if i < len(blk) {
					blk[i] = second
					i++
				}
			}
		default:
			k := uint(id - 1)
			i := 0
			if ref {
				blk[0], i = d.get(d.n), 1
			}
			// fs and get by hand, the bits in registers
			acc, nb := d.acc, d.nb
			for j := i; j < len(blk); j++ {
				var q uint32
				if lz := uint(bits.LeadingZeros64(acc)); lz < nb {
					acc <<= lz + 1
					nb -= lz + 1
					q = uint32(lz)
				} else {
					d.acc, d.nb = acc, nb
					q = d.fs()
					acc, nb = d.acc, d.nb
				}
				blk[j] = q << k
			}
			if k > 0 {
				for j := i; j < len(blk); j++ {
					if nb < k {
						d.acc, d.nb = acc, nb
						d.refill()
						acc, nb = d.acc, d.nb
					}
					blk[j] += uint32(acc >> (64 - k))
					acc <<= k
					nb -= k
				}
			}
			d.acc, d.nb = acc, nb
		}
		if d.short() {
			return errSzipShort
		}
		d.emit(blk, ref)
		b++
	}
	return nil
}

// emit takes one block's decoded samples (with the preprocessor, the differences, but for
// the reference sample where ref says one is first), undoes the preprocessor and writes the
// samples that are not scanline padding, up to d.need.
func (d *szipDecoder) emit(v []uint32, ref bool) {
	if d.pp {
		i := 0
		if ref {
			d.last, i = v[0], 1
		}
		x, xmax, half := d.last, d.xmax, d.half
		for ; i < len(v); i++ {
			delta := v[i]
			var mask uint32 // x's nearer end of the range: 0, or xmax
			if x&half != 0 {
				mask = xmax
			}
			near := x + (delta>>1 ^ -(delta & 1)) // within the distance to that end: +d/2 or -(d+1)/2
			far := mask ^ delta                   // beyond it: counted from that end
			if delta>>1+delta&1 <= mask^x {
				x = near
			} else {
				x = far
			}
			v[i] = x
		}
		d.last = x
	}
	keep := min(len(v), d.keep-d.pos0, d.need-d.produced)
	d.pos0 += len(v)
	if keep <= 0 {
		return
	}
	v = v[:keep]
	d.produced += keep
	out := d.out[d.o : d.o+keep*d.width]
	d.o += len(out)
	switch {
	case d.width == 1:
		for i, x := range v {
			out[i] = byte(x)
		}
	case d.width == 2 && d.msb:
		for i, x := range v {
			binary.BigEndian.PutUint16(out[2*i:], uint16(x))
		}
	case d.width == 2:
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
		}
	case d.msb:
		for i, x := range v {
			binary.BigEndian.PutUint32(out[4*i:], x)
		}
	default:
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], x)
		}
	}
}

// emitRun writes n samples of the value v (a run of zero blocks), but for scanline padding
// and up to d.need.
func (d *szipDecoder) emitRun(v uint32, n int) {
	keep := min(n, d.keep-d.pos0, d.need-d.produced)
	d.pos0 += n
	if keep <= 0 {
		return
	}
	d.produced += keep
	out := d.out[d.o : d.o+keep*d.width]
	d.o += len(out)
	var w [4]byte
	switch {
	case d.width == 1:
		w[0] = byte(v)
	case d.width == 2 && d.msb:
		binary.BigEndian.PutUint16(w[:], uint16(v))
	case d.width == 2:
		binary.LittleEndian.PutUint16(w[:], uint16(v))
	case d.msb:
		binary.BigEndian.PutUint32(w[:], v)
	default:
		binary.LittleEndian.PutUint32(w[:], v)
	}
	if v == 0 {
		clear(out)
		return
	}
	copy(out, w[:d.width])
	for k := d.width; k < len(out); k *= 2 { // the pattern doubled until out is full
		copy(out[k:], out[:k])
	}
}
