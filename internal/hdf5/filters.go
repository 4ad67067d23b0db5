package hdf5

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The registered third-party filters this package decodes, as the HDF Group's plugins
// (github.com/HDFGroup/hdf5_plugins), h5py (LZF), PyTables (LZO) and hdf5plugin write them.
const (
	filterLZO        = 305
	filterBzip2      = 307
	filterLZF        = 32000
	filterLZ4        = 32004
	filterBitshuffle = 32008
	filterZstd       = 32015
)

// errOverrun is returned by a decoder whose output would not fit the chunk: the caller names
// the chunk and the size expected.
var errOverrun = errors.New("decodes to more bytes than the chunk holds")

// lzfDecode decodes the LZF block src (liblzf's format, as h5py's filter writes it, with no
// header) into dst and returns the bytes written. A control byte below 32 starts a run of
// that many plus one literal bytes; any other is a back reference: its top three bits the
// length minus two (7: a byte of length follows), its low five bits and the next byte the
// distance minus one.
func lzfDecode(dst, src []byte) (int, error) {
	ip, op := 0, 0
	for ip < len(src) {
		c := int(src[ip])
		ip++
		if c < 32 {
			n := c + 1
			if ip+n > len(src) {
				return op, io.ErrUnexpectedEOF
			}
			if op+n > len(dst) {
				return op, errOverrun
			}
			copy(dst[op:], src[ip:ip+n])
			ip, op = ip+n, op+n
			continue
		}
		n := c >> 5
		if n == 7 {
			if ip >= len(src) {
				return op, io.ErrUnexpectedEOF
			}
			n += int(src[ip])
			ip++
		}
		n += 2
		if ip >= len(src) {
			return op, io.ErrUnexpectedEOF
		}
		ref := op - (c&0x1f)<<8 - int(src[ip]) - 1
		ip++
		if ref < 0 {
			return op, fmt.Errorf("LZF back reference %d bytes before the start of the chunk", -ref)
		}
		if op+n > len(dst) {
			return op, errOverrun
		}
		if op-ref >= n {
			copy(dst[op:op+n], dst[ref:ref+n])
		} else { // the copy overlaps what it writes: byte by byte, as the format means
			for i := range n {
				dst[op+i] = dst[ref+i]
			}
		}
		op += n
	}
	return op, nil
}

// lzoDecode decodes the LZO1X block src (liblzo2's format, as PyTables' filter stores it:
// no header, no checksum) into dst and returns the bytes written. The stream is a sequence
// of instructions whose meaning depends on the state the previous one left: the number of
// literals that followed the last match (0 to 3), or 4 after a literal run. An instruction
// byte t:
//   - t >= 64 (M2): a match of (t>>5)+1 bytes, distance 1 + (t>>2)&7 + next byte<<3;
//   - 32-63 (M3): a match of (t&31)+2 bytes (0: a length extension follows), then 2 bytes,
//     little-endian, whose top 14 bits are the distance minus 1;
//   - 16-31 (M4): a match of (t&7)+2 bytes (0: extended), distance 16384 + (t&8)<<11 + the
//     next 2 bytes' top 14 bits; a distance of exactly 16384 ends the stream;
//   - below 16 (M1 or a literal run, by state): in state 0 a run of t+3 literals (t = 0:
//     18 plus the extension); in states 1-3 a 2-byte match, in state 4 a 3-byte match, at
//     distance 1 + t>>2 + next byte<<2 (plus 2048 in state 4).
//
// After a match, the low 2 bits of its instruction byte (M1, M2) or of its first distance
// byte (M3, M4) count the literals that follow it, the next state. A length extension is
// a zero byte per 255 more, then a byte added to the length. A first byte above 17 starts the
// stream with a run of that byte minus 17 literals.
func lzoDecode(dst, src []byte) (int, error) {
	ip, op, state := 0, 0, 0
	if len(src) > 0 && src[0] > 17 {
		n := int(src[0]) - 17
		ip = 1
		if ip+n > len(src) {
			return op, io.ErrUnexpectedEOF
		}
		if n > len(dst) {
			return op, errOverrun
		}
		op = copy(dst, src[ip:ip+n])
		ip += n
		state = min(n, 4)
	}
	for {
		if ip >= len(src) {
			return op, io.ErrUnexpectedEOF
		}
		t := int(src[ip])
		ip++
		var n, dist int
		var err error
		switch {
		case t < 16 && state == 0: // literal run
			n = t + 3
			if t == 0 {
				if n, ip, err = lzoLength(src, ip, 18, len(dst)); err != nil {
					return op, err
				}
			}
			if ip+n > len(src) {
				return op, io.ErrUnexpectedEOF
			}
			if op+n > len(dst) {
				return op, errOverrun
			}
			copy(dst[op:], src[ip:ip+n])
			ip, op, state = ip+n, op+n, 4
			continue
		case t < 16: // M1
			if ip >= len(src) {
				return op, io.ErrUnexpectedEOF
			}
			n, dist = 2, 1+t>>2+int(src[ip])<<2
			if state == 4 {
				n, dist = 3, dist+2048
			}
			ip++
			state = t & 3
		case t >= 64: // M2
			if ip >= len(src) {
				return op, io.ErrUnexpectedEOF
			}
			n, dist = t>>5+1, 1+(t>>2)&7+int(src[ip])<<3
			ip++
			state = t & 3
		default: // M3, M4
			mask, base := 31, 1
			if t < 32 {
				mask, base = 7, 16384+(t&8)<<11
			}
			n = t&mask + 2
			if t&mask == 0 {
				if n, ip, err = lzoLength(src, ip, mask+2, len(dst)); err != nil {
					return op, err
				}
			}
			if ip+2 > len(src) {
				return op, io.ErrUnexpectedEOF
			}
			d := int(src[ip]) | int(src[ip+1])<<8
			ip += 2
			dist, state = base+d>>2, d&3
			if t < 32 && dist == 16384 { // M4 only: an M3's distance reaches 16384 too
				if ip != len(src) {
					return op, fmt.Errorf("%d bytes after the LZO end-of-stream marker", len(src)-ip)
				}
				return op, nil
			}
		}
		if dist > op {
			return op, fmt.Errorf("LZO back reference %d bytes before the start of the chunk", dist-op)
		}
		if op+n > len(dst) {
			return op, errOverrun
		}
		// a copy that overlaps what it writes repeats the last dist bytes: copied in whole
		// periods, each copy twice the one before
		for ref, end := op-dist, op+n; op < end; {
			op += copy(dst[op:end], dst[ref:op])
		}
		if state > 0 { // the literals that follow a match
			if ip+state > len(src) {
				return op, io.ErrUnexpectedEOF
			}
			if op+state > len(dst) {
				return op, errOverrun
			}
			copy(dst[op:], src[ip:ip+state])
			ip, op = ip+state, op+state
		}
	}
}

// lzoLength reads an LZO length extension at src[ip:]: a zero byte for each 255, then a byte
// added to base. It returns the length and where the extension ends; a length above limit
// (the output's size) is errOverrun, without counting further.
func lzoLength(src []byte, ip, base, limit int) (int, int, error) {
	n := base
	for ip < len(src) && src[ip] == 0 {
		n += 255
		ip++
		if n > limit {
			return 0, ip, errOverrun
		}
	}
	if ip >= len(src) {
		return 0, ip, io.ErrUnexpectedEOF
	}
	return n + int(src[ip]), ip + 1, nil
}

// lz4Decode decodes a chunk of the HDF Group's LZ4 filter into dst and returns the bytes
// written: the decoded size (8 bytes, big-endian), the block size (4), then per block its
// stored size (4) and its bytes, an LZ4 block, or the block as is where the stored size is
// the block's size.
func lz4Decode(dst, src []byte) (int, error) {
	if len(src) < 12 {
		return 0, io.ErrUnexpectedEOF
	}
	total := binary.BigEndian.Uint64(src)
	block := uint64(binary.BigEndian.Uint32(src[8:]))
	if total > uint64(len(dst)) {
		return 0, fmt.Errorf("LZ4 header says %d bytes: %w", total, errOverrun)
	}
	if block > total {
		block = total
	}
	if block == 0 && total > 0 {
		return 0, errors.New("LZ4 block size 0")
	}
	src = src[12:]
	op := 0
	for uint64(op) < total {
		n := int(min(block, total-uint64(op)))
		if len(src) < 4 {
			return op, io.ErrUnexpectedEOF
		}
		stored := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(stored) > uint64(len(src)) {
			return op, io.ErrUnexpectedEOF
		}
		in := src[:stored]
		src = src[stored:]
		if int(stored) == n {
			copy(dst[op:], in)
		} else {
			k, err := lz4.UncompressBlock(in, dst[op:op+n])
			if err != nil {
				return op, fmt.Errorf("LZ4 block at decoded byte %d: %v", op, err)
			}
			if k != n {
				return op, fmt.Errorf("LZ4 block at decoded byte %d holds %d bytes where %d are expected", op, k, n)
			}
		}
		op += n
	}
	if len(src) != 0 {
		return op, fmt.Errorf("%d bytes after the last LZ4 block", len(src))
	}
	return op, nil
}

// Bitshuffle's parameters (cd_values) name the element size (slot 2), the block size in
// elements (slot 3, 0 for the default) and the compression (slot 4): none, LZ4 or Zstandard
// (slot 5 then holds the level it was written at, which decoding does not need).
const (
	bshufNone = 0
	bshufLZ4  = 2
	bshufZstd = 3
)

// bitshuffleDecode undoes the bitshuffle filter into dst and returns the bytes written. The
// elements are taken in blocks (of a multiple of 8 elements); within a block, bit j of byte b
// of every element is stored together, as row 8b+j of the block, element i at bit i%8 of the
// row's byte i/8. A chunk's last elements that do not fill 8 are stored as they are. With
// LZ4 or Zstandard the chunk starts with its size (8 bytes, big-endian) and the block size in
// bytes (4), and each block is an LZ4 block or a Zstandard frame after its stored size (4),
// decoded into the scratch's block buffer, never past the block's size, before its bits are
// put back; the blocks are as the block size says but for the last, which takes the whole
// groups of 8 left, and the elements after it are stored as they are.
func (s *scratch) bitshuffleDecode(dst, src []byte, params []uint32) (int, error) {
	if len(params) < 3 || params[2] == 0 || params[2] > 1<<16 {
		return 0, fmt.Errorf("bitshuffle parameters %v name no element size", params)
	}
	elem := int(params[2])
	comp := uint32(bshufNone)
	if len(params) > 4 {
		comp = params[4]
	}
	var codec string
	switch comp {
	case bshufNone:
	case bshufLZ4:
		codec = "LZ4"
	case bshufZstd:
		codec = "Zstandard"
	default:
		return 0, fmt.Errorf("bitshuffle compression %d (only none, LZ4 and Zstandard)", comp)
	}
	block := 0
	if len(params) > 3 {
		block = int(params[3])
	}
	total := len(src)
	if comp != bshufNone {
		if len(src) < 12 {
			return 0, io.ErrUnexpectedEOF
		}
		t := binary.BigEndian.Uint64(src)
		if t > uint64(len(dst)) {
			return 0, fmt.Errorf("bitshuffle header says %d bytes: %w", t, errOverrun)
		}
		total, block = int(t), int(binary.BigEndian.Uint32(src[8:]))/elem
		src = src[12:]
	}
	if total > len(dst) {
		return 0, errOverrun
	}
	if total%elem != 0 {
		return 0, fmt.Errorf("bitshuffle: %d bytes are not whole %d-byte elements", total, elem)
	}
	if block == 0 {
		block = max(8192/elem/8*8, 128)
	}
	if block%8 != 0 || block < 0 {
		return 0, fmt.Errorf("bitshuffle block of %d elements (not a multiple of 8)", block)
	}
	n := total / elem
	block = min(block, n/8*8) // the blocks never exceed the chunk's whole groups of 8
	var tmp []byte
	if comp != bshufNone && block > 0 {
		s.bs = grow(s.bs, uint64(block*elem))
		tmp = s.bs
	}
	op := 0
	for left := n / 8 * 8; left > 0; {
		bs := min(block, left)
		size := bs * elem
		out := dst[op : op+size]
		var in []byte
		if comp != bshufNone {
			if len(src) < 4 {
				return op, io.ErrUnexpectedEOF
			}
			stored := binary.BigEndian.Uint32(src)
			if uint64(stored) > uint64(len(src)-4) {
				return op, io.ErrUnexpectedEOF
			}
			var k int
			var err error
			if comp == bshufLZ4 {
				k, err = lz4.UncompressBlock(src[4:4+stored], tmp[:size])
			} else {
				k, err = s.zstdDecode(tmp[:size], src[4:4+stored])
			}
			switch {
			case errors.Is(err, errOverrun):
				return op, fmt.Errorf("%s block at decoded byte %d decodes to more than its %d bytes", codec, op, size)
			case err != nil:
				return op, fmt.Errorf("%s block at decoded byte %d: %v", codec, op, err)
			case k != size:
				return op, fmt.Errorf("%s block at decoded byte %d holds %d bytes where %d are expected", codec, op, k, size)
			}
			in, src = tmp[:size], src[4+stored:]
		} else {
			if len(src) < size {
				return op, io.ErrUnexpectedEOF
			}
			in, src = src[:size], src[size:]
		}
		unbitshuffle(out, in, bs, elem)
		op += size
		left -= bs
	}
	rest := (n % 8) * elem
	if len(src) != rest {
		return op, fmt.Errorf("bitshuffle: %d bytes after the blocks where %d are expected", len(src), rest)
	}
	op += copy(dst[op:], src)
	return op, nil
}

// unbitshuffle writes into out the n elements of elem bytes whose bit rows in holds (n a
// multiple of 8, len(in) == len(out) == n*elem). Eight row bytes (bits j of byte b of eight
// elements) form an 8x8 bit matrix; its transpose is byte b of those eight elements.
func unbitshuffle(out, in []byte, n, elem int) {
	rowLen := n / 8
	for b := range elem {
		rows := in[8*b*rowLen : 8*(b+1)*rowLen]
		for k := range rowLen {
			var x uint64
			for j := range 8 {
				x |= uint64(rows[j*rowLen+k]) << (8 * j)
			}
			// transpose: bit 8j+m (row j, element m) goes to bit 8m+j
			t := (x ^ x>>7) & 0x00AA00AA00AA00AA
			x ^= t ^ t<<7
			t = (x ^ x>>14) & 0x0000CCCC0000CCCC
			x ^= t ^ t<<14
			t = (x ^ x>>28) & 0x00000000F0F0F0F0
			x ^= t ^ t<<28
			o := 8*k*elem + b
			for m := range 8 {
				out[o+m*elem] = byte(x >> (8 * m))
			}
		}
	}
}

// bzip2Decode decodes the bzip2 stream src into dst and returns the bytes written.
func bzip2Decode(dst, src []byte) (int, error) {
	return readExactly(bzip2.NewReader(bytes.NewReader(src)), dst)
}

// zstdWindow is the largest window a Zstandard frame may use where it does not state its
// content size or its window is larger than its chunk: 8 MiB, zstd's largest for compression
// levels up to 19.
const zstdWindow = 8 << 20

// zstdDecode decodes the Zstandard frames src into dst and returns the bytes written. A frame
// that states its content size (as the HDF Group's filter writes them) is decoded straight
// into dst, by a decoder that may produce no more than dst holds: a frame claiming more is
// refused before anything is allocated for it. Any other is decoded as a stream, with a
// window of at most zstdWindow, and stopped where it would overrun dst.
func (s *scratch) zstdDecode(dst, src []byte) (int, error) {
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return 0, err
	}
	if h.HasFCS {
		if h.FrameContentSize > uint64(len(dst)) {
			return 0, fmt.Errorf("Zstandard frame of %d bytes: %w", h.FrameContentSize, errOverrun)
		}
		// one decoder serves every dst up to the largest seen (Blosc's blocks, a chunk's last
		// block shorter): what it may produce beyond len(dst) is refused below. Its limit is
		// never under zstd's smallest window, which the decoder takes for a single-segment
		// frame's window when the frame is smaller: a limit of a 1000-byte dst refused a
		// 1000-byte frame, depending on which pooled scratch decoded it.
		if limit := max(len(dst), zstd.MinWindowSize); s.zd == nil || s.zdMax < limit {
			if s.zd != nil {
				s.zd.Close()
			}
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(uint64(limit)))
			if err != nil {
				return 0, err
			}
			s.zd, s.zdMax = zd, limit
		}
		out, err := s.zd.DecodeAll(src, dst[:0])
		switch {
		case errors.Is(err, zstd.ErrDecoderSizeExceeded), err == nil && len(out) > len(dst):
			return min(len(out), len(dst)), errOverrun
		case err == nil:
			return len(out), nil
		case !errors.Is(err, zstd.ErrWindowSizeExceeded):
			return min(len(out), len(dst)), err
		}
		// a window larger than the chunk: as a stream
	}
	if s.zs == nil {
		zs, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdWindow), zstd.WithDecoderMaxMemory(zstdWindow))
		if err != nil {
			return 0, err
		}
		s.zs = zs
	}
	if err := s.zs.Reset(bytes.NewReader(src)); err != nil {
		return 0, err
	}
	return readExactly(s.zs, dst)
}

// readExactly reads r into dst until r ends, and returns the bytes read; more than dst holds
// is errOverrun.
func readExactly(r io.Reader, dst []byte) (int, error) {
	k, err := io.ReadFull(r, dst)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return k, nil
	case err != nil:
		return k, err
	}
	var one [1]byte
	for tries := 0; ; tries++ {
		m, err := r.Read(one[:])
		switch {
		case m > 0:
			return k, errOverrun
		case err == io.EOF:
			return k, nil
		case err != nil:
			return k, err
		case tries > 16:
			return k, io.ErrNoProgress
		}
	}
}
