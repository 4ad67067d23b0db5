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
// (github.com/HDFGroup/hdf5_plugins), h5py (LZF) and hdf5plugin write them.
const (
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
// elements (slot 3, 0 for the default) and the compression (slot 4): none, or LZ4. Its
// Zstandard variant (3) is refused when the file is opened.
const (
	bshufNone = 0
	bshufLZ4  = 2
)

// bitshuffleDecode undoes the bitshuffle filter into dst and returns the bytes written. The
// elements are taken in blocks (of a multiple of 8 elements); within a block, bit j of byte b
// of every element is stored together, as row 8b+j of the block, element i at bit i%8 of the
// row's byte i/8. A chunk's last elements that do not fill 8 are stored as they are. With
// LZ4 the chunk starts with its size (8 bytes, big-endian) and the block size in bytes (4),
// and each block is an LZ4 block after its stored size (4), decoded into the scratch's block
// buffer before its bits are put back.
func (s *scratch) bitshuffleDecode(dst, src []byte, params []uint32) (int, error) {
	if len(params) < 3 || params[2] == 0 || params[2] > 1<<16 {
		return 0, fmt.Errorf("bitshuffle parameters %v name no element size", params)
	}
	elem := int(params[2])
	comp := uint32(bshufNone)
	if len(params) > 4 {
		comp = params[4]
	}
	block := 0
	if len(params) > 3 {
		block = int(params[3])
	}
	total := len(src)
	if comp == bshufLZ4 {
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
	if comp == bshufLZ4 && block > 0 {
		s.bs = grow(s.bs, uint64(block*elem))
		tmp = s.bs
	}
	op := 0
	for left := n / 8 * 8; left > 0; {
		bs := min(block, left)
		out := dst[op : op+bs*elem]
		in := src
		if comp == bshufLZ4 {
			if len(src) < 4 {
				return op, io.ErrUnexpectedEOF
			}
			stored := binary.BigEndian.Uint32(src)
			if uint64(stored) > uint64(len(src)-4) {
				return op, io.ErrUnexpectedEOF
			}
			k, err := lz4.UncompressBlock(src[4:4+stored], tmp[:bs*elem])
			if err != nil || k != bs*elem {
				return op, fmt.Errorf("LZ4 block at decoded byte %d: %d bytes where %d are expected (%v)", op, k, bs*elem, err)
			}
			in, src = tmp[:bs*elem], src[4+stored:]
		} else {
			if len(src) < bs*elem {
				return op, io.ErrUnexpectedEOF
			}
			in, src = src[:bs*elem], src[bs*elem:]
		}
		unbitshuffle(out, in, bs, elem)
		op += bs * elem
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
