package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// filterBlosc is the Blosc filter (PyTables', hdf5-blosc's, hdf5plugin's). Its parameters
// (cd_values) are the filter's revision, the Blosc format version, the element size, the
// chunk's size in bytes, the compression level, the shuffle (0 none, 1 bytes, 2 bits) and the
// compressor (slot 6); the chunk itself is one Blosc frame, which says all of that again.
const filterBlosc = 32001

// The compressors a Blosc frame names in the top three bits of its flags.
const (
	bloscBloscLZ = iota
	bloscLZ4     // also LZ4HC: one format
	bloscSnappy
	bloscZlib
	bloscZstd
	bloscCodecs // the number of compressors
)

// bloscCodecName names Blosc's compressors, for errors.
var bloscCodecName = [bloscCodecs]string{"blosclz", "lz4", "snappy", "zlib", "zstd"}

// A Blosc frame's flags (byte 2 of its header).
const (
	bloscShuffle    = 0x01 // bytes shuffled within each block
	bloscMemcpyed   = 0x02 // the data stored as it is after the header
	bloscBitshuffle = 0x04 // bits shuffled within each block
	bloscReserved   = 0x08 // refused: not defined by any Blosc 1.x release
	bloscNoSplit    = 0x10 // no block is split into one stream per byte of the element
)

// bloscHeader is the size of a Blosc frame's header.
const bloscHeader = 16

// bloscDecode decodes the Blosc frame src (Blosc 1.x's format, version 2) into dst and returns
// the bytes written. The header holds the format version (2), the compressor's format version
// (1), the flags, the element size, then three 32-bit little-endian sizes: the data's, one
// block's (the last block holds what is left), and the frame's. A frame flagged memcpyed holds
// the data itself after the header. Any other holds the offsets of its blocks (32-bit, from
// the frame's start), then the blocks. A block is one stream, or one per byte of the element
// (each the bytes of its split, compressed by the compressor on their own) where the frame
// does not say otherwise, the element is of at most 16 bytes, the block holds at least 128
// elements, and it is not the last, short block. Each stream follows its 32-bit size; a size
// equal to the stream's decoded size means the bytes are stored as they are. The block's bytes
// are then put back from their byte or bit shuffle, as the flags say.
func (s *scratch) bloscDecode(dst, src []byte) (int, error) {
	if len(src) < bloscHeader {
		return 0, io.ErrUnexpectedEOF
	}
	version, codecVersion, flags, typesize := src[0], src[1], src[2], int(src[3])
	nbytes := binary.LittleEndian.Uint32(src[4:])
	blocksize := binary.LittleEndian.Uint32(src[8:])
	cbytes := binary.LittleEndian.Uint32(src[12:])
	if version != 2 {
		return 0, fmt.Errorf("Blosc format version %d (only 2, Blosc 1.x's)", version)
	}
	if flags&bloscReserved != 0 {
		return 0, fmt.Errorf("Blosc flags %#x: bit 3 is not defined", flags)
	}
	if uint64(nbytes) > uint64(len(dst)) {
		return 0, fmt.Errorf("Blosc header says %d bytes: %w", nbytes, errOverrun)
	}
	if nbytes == 0 {
		return 0, nil
	}
	if typesize == 0 {
		return 0, errors.New("Blosc element size 0")
	}
	if blocksize == 0 || blocksize > nbytes {
		return 0, fmt.Errorf("Blosc block of %d bytes for %d bytes of data", blocksize, nbytes)
	}
	if uint64(cbytes) > uint64(len(src)) {
		return 0, fmt.Errorf("Blosc frame of %d bytes in %d: %w", cbytes, len(src), io.ErrUnexpectedEOF)
	}
	if cbytes < bloscHeader {
		return 0, fmt.Errorf("Blosc frame of %d bytes, shorter than its header", cbytes)
	}
	src = src[:cbytes] // anything after the frame is not read, as Blosc does not
	n := int(nbytes)
	if flags&bloscMemcpyed != 0 {
		if uint64(cbytes) != uint64(nbytes)+bloscHeader {
			return 0, fmt.Errorf("Blosc frame of %d bytes stored as is holds %d", nbytes, cbytes-bloscHeader)
		}
		return copy(dst, src[bloscHeader:]), nil
	}
	codec := int(flags >> 5)
	if codec >= bloscCodecs {
		return 0, fmt.Errorf("Blosc compressor %d (not one of Blosc 1.x's)", codec)
	}
	if codecVersion != 1 {
		return 0, fmt.Errorf("Blosc with %s, format version %d (only 1)", bloscCodecName[codec], codecVersion)
	}
	bs := int(blocksize)
	nblocks := (n + bs - 1) / bs
	if nblocks > (len(src)-bloscHeader)/4 {
		return 0, fmt.Errorf("Blosc frame of %d bytes too short for its %d block offsets", len(src), nblocks)
	}
	shuffled := flags&(bloscShuffle|bloscBitshuffle) != 0
	if shuffled {
		s.bs = grow(s.bs, uint64(bs))
	}
	for j := range nblocks {
		lo := j * bs
		out := dst[lo:min(lo+bs, n)]
		start := binary.LittleEndian.Uint32(src[bloscHeader+4*j:])
		if err := s.bloscBlock(out, src, start, flags, typesize, len(out) < bs); err != nil {
			return lo, fmt.Errorf("Blosc (%s) block %d at decoded byte %d: %v", bloscCodecName[codec], j, lo, err)
		}
	}
	return n, nil
}

// bloscBlock decodes one block of the Blosc frame src, starting at byte start, into out (the
// block's decoded size); short says it is the frame's last block and shorter than the others.
func (s *scratch) bloscBlock(out, src []byte, start uint32, flags byte, typesize int, short bool) error {
	bs := len(out)
	byteShuffle := flags&bloscShuffle != 0 && typesize > 1
	bitShuffle := !byteShuffle && flags&bloscBitshuffle != 0 && bs >= typesize
	splits := 1
	if flags&bloscNoSplit == 0 && typesize <= 16 && bs/typesize >= 128 && !short {
		splits = typesize
	}
	if bs%splits != 0 {
		return fmt.Errorf("block of %d bytes does not split into %d streams", bs, splits)
	}
	size := bs / splits
	into := out
	if byteShuffle || bitShuffle {
		into = s.bs[:bs]
	}
	codec := int(flags >> 5)
	off := uint64(start)
	for k := range splits {
		if off+4 > uint64(len(src)) {
			return fmt.Errorf("stream %d at byte %d of a frame of %d bytes", k, off, len(src))
		}
		stored := uint64(binary.LittleEndian.Uint32(src[off:]))
		off += 4
		if stored > uint64(len(src))-off {
			return fmt.Errorf("stream %d of %d bytes at byte %d of a frame of %d bytes: %w", k, stored, off, len(src), io.ErrUnexpectedEOF)
		}
		in, part := src[off:off+stored], into[k*size:(k+1)*size]
		off += stored
		if int(stored) == size {
			copy(part, in)
			continue
		}
		got, err := s.bloscStream(codec, part, in)
		switch {
		case errors.Is(err, errOverrun):
			return fmt.Errorf("stream %d decodes to more than its %d bytes", k, size)
		case err != nil:
			return fmt.Errorf("stream %d: %v", k, err)
		case got != size:
			return fmt.Errorf("stream %d decodes to %d bytes where %d are expected", k, got, size)
		}
	}
	switch {
	case byteShuffle:
		unshuffle(out, into, typesize)
	case bitShuffle:
		// whole groups of 8 elements are bit-shuffled as one, the rest stored as it is
		elems := bs / typesize
		if elems%8 != 0 {
			copy(out, into)
			break
		}
		unbitshuffle(out, into, elems, typesize)
		copy(out[elems*typesize:], into[elems*typesize:])
	}
	return nil
}

// bloscStream decodes one compressed stream of a Blosc block into dst, by the compressor the
// frame names, and returns the bytes written.
func (s *scratch) bloscStream(codec int, dst, src []byte) (int, error) {
	switch codec {
	case bloscBloscLZ:
		return blosclzDecode(dst, src)
	case bloscLZ4:
		return lz4.UncompressBlock(src, dst)
	case bloscSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return 0, err
		}
		if n > len(dst) {
			return 0, errOverrun
		}
		out, err := snappy.DecodeStrict(dst[:n], src)
		return len(out), err
	case bloscZlib:
		return s.inflate(dst, src)
	default: // bloscZstd
		return s.zstdDecode(dst, src)
	}
}

// blosclz's longest near distance: a match whose 13-bit distance field is all ones and whose
// next byte is 255 takes its distance from the two bytes after it (big-endian), plus this.
const blosclzFar = 8191

// blosclzDecode decodes the blosclz stream src (Blosc's FastLZ-derived LZ77) into dst and
// returns the bytes written. The low five bits of the first byte count its literals less one
// (its top bits are not read). After that each control byte is, below 32, a run of that many
// plus one literal bytes; otherwise a back reference: its top three bits the length less two
// (7: bytes follow, each added, until one below 255), its low five bits the high bits of the
// distance less one, the next byte its low bits (both all ones: a 16-bit distance follows, to
// which blosclzFar is added). A reference is never the last thing in a stream: its copy waits
// for the next control byte, so that a stream that ends after one is refused here as Blosc
// refuses it (by decoding too few bytes).
func blosclzDecode(dst, src []byte) (int, error) {
	if len(src) == 0 {
		return 0, nil
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl < 32 {
			n := ctrl + 1
			if op+n > len(dst) {
				return op, errOverrun
			}
			if ip+n > len(src) {
				return op, io.ErrUnexpectedEOF
			}
			copy(dst[op:], src[ip:ip+n])
			ip, op = ip+n, op+n
			if ip >= len(src) {
				return op, nil
			}
			ctrl = int(src[ip])
			ip++
			continue
		}
		n := ctrl>>5 - 1
		if n == 6 {
			for {
				if ip+1 >= len(src) {
					return op, io.ErrUnexpectedEOF
				}
				c := int(src[ip])
				ip++
				n += c
				if c != 255 {
					break
				}
			}
		} else if ip+1 >= len(src) {
			return op, io.ErrUnexpectedEOF
		}
		code := int(src[ip])
		ip++
		n += 3
		dist := (ctrl&31)<<8 + code + 1
		if code == 255 && ctrl&31 == 31 {
			if ip+1 >= len(src) {
				return op, io.ErrUnexpectedEOF
			}
			dist = int(src[ip])<<8 + int(src[ip+1]) + blosclzFar + 1
			ip += 2
		}
		if op+n > len(dst) {
			return op, errOverrun
		}
		if dist > op {
			return op, fmt.Errorf("blosclz back reference %d bytes before the start of the stream", dist-op)
		}
		if ip >= len(src) {
			return op, errors.New("blosclz stream ends with a back reference")
		}
		ctrl = int(src[ip])
		ip++
		ref := op - dist
		if dist >= n {
			copy(dst[op:op+n], dst[ref:ref+n])
		} else { // the copy overlaps what it writes: byte by byte, as the format means
			for i := range n {
				dst[op+i] = dst[ref+i]
			}
		}
		op += n
	}
}
