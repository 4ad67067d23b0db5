package hdf5

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Every dataset of the files in testdata/blosc (written by make.py with PyTables, h5py and
// python-blosc, all on c-blosc 1.21.3) reads as PyTables or h5py read it back: the SHA-256 of
// its values (little-endian) in expected.txt, with the shape and element size stated there.
// They cover the six compressors, no/byte/bit shuffle, 1- to 32-byte elements, split and
// unsplit blocks, several blocks with a short last one, partial edge chunks and a frame stored
// as it is.
func TestBloscFiles(t *testing.T) { checkExpected(t, "testdata/blosc", "blosc", 40) }

// checkExpected reads every dataset that dir/expected.txt lists (eachExpected) and compares
// it (checkValues), and that the filter named is the last of its pipeline (the first undone).
func checkExpected(t *testing.T, dir, filter string, min int) {
	t.Helper()
	eachExpected(t, dir, min, func(e expected) {
		d, got := readAll(t, filepath.Join(dir, e.file), e.path)
		if fl := d.Filters(); len(fl) == 0 || fl[len(fl)-1] != filter {
			t.Errorf("%s %s: filters %v", e.file, e.path, fl)
		}
		e.check(t, d.Dims, d.Type.Size, got)
	})
}

// expected is a line of a make.py's expected.txt: the file, the dataset's path, its numpy
// dtype and shape (AxB) and the SHA-256 of its values as little-endian bytes, as h5py (or the
// writer) read them back.
type expected struct{ file, path, dtype, shape, sum string }

// eachExpected calls fn for every line of dir/expected.txt, of which there must be min at least.
func eachExpected(t *testing.T, dir string, min int, fn func(expected)) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			t.Fatalf("expected.txt: %q", sc.Text())
		}
		n++
		fn(expected{fields[0], fields[1], fields[2], fields[3], fields[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < min {
		t.Errorf("%s: %d datasets in expected.txt", dir, n)
	}
}

// check compares the dimensions, element size and values read with the line's.
func (e expected) check(t *testing.T, dims []uint64, size int, got []byte) {
	t.Helper()
	var ds []string
	for _, x := range dims {
		ds = append(ds, strconv.FormatUint(x, 10))
	}
	if es, _ := strconv.Atoi(strings.TrimLeft(e.dtype, "<>|=ifuSV")); strings.Join(ds, "x") != e.shape || size != es {
		t.Errorf("%s %s: %v of %d-byte elements, want %s of %s", e.file, e.path, dims, size, e.shape, e.dtype)
	}
	if h := sha256.Sum256(got); hex.EncodeToString(h[:]) != e.sum {
		t.Errorf("%s %s: values differ from what the writer read back", e.file, e.path)
	}
}

// bloscSplits is the number of streams c-blosc 1.x cuts a block into: one per byte of the
// element unless the frame's flag says not to, the element is over 16 bytes, the block holds
// under 128 elements, or it is the frame's short last block.
func bloscSplits(flags byte, typesize, bs int, short bool) int {
	if flags&bloscNoSplit != 0 || typesize > 16 || bs/typesize < 128 || short {
		return 1
	}
	return typesize
}

// bloscEncode writes data as a Blosc frame with the compressor codec (its streams stored as
// they are where they would not shrink, or always with stored), shuffle flags (bloscShuffle,
// bloscBitshuffle, bloscNoSplit) and blocks of bs bytes.
func bloscEncode(t testing.TB, data []byte, codec int, flags byte, typesize, bs int, stored bool) []byte {
	t.Helper()
	flags |= byte(codec) << 5
	nblocks := (len(data) + bs - 1) / bs
	out := make([]byte, bloscHeader+4*nblocks)
	out[0], out[1], out[2], out[3] = 2, 1, flags, byte(typesize)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(data)))
	binary.LittleEndian.PutUint32(out[8:], uint32(bs))
	for j := range nblocks {
		block := data[j*bs : min((j+1)*bs, len(data))]
		binary.LittleEndian.PutUint32(out[bloscHeader+4*j:], uint32(len(out)))
		in := make([]byte, len(block))
		switch {
		case flags&bloscShuffle != 0 && typesize > 1:
			shuffleBytes(in, block, typesize)
		case flags&bloscBitshuffle != 0 && len(block) >= typesize && len(block)/typesize%8 == 0:
			n := len(block) / typesize * typesize
			bitshuffleBits(in[:n], block[:n], typesize)
			copy(in[n:], block[n:])
		default:
			copy(in, block)
		}
		splits := bloscSplits(flags, typesize, len(block), len(block) < bs)
		size := len(block) / splits
		for k := range splits {
			part := in[k*size : (k+1)*size]
			c := part
			if !stored {
				c = bloscCompress(t, codec, part)
				if len(c) >= len(part) {
					c = part
				}
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(len(c)))
			out = append(out, c...)
		}
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)))
	return out
}

// bloscCompress compresses one stream with Go's encoders (blosclz: literal runs, and a
// back reference of distance 1 for runs of one byte).
func bloscCompress(t testing.TB, codec int, b []byte) []byte {
	switch codec {
	case bloscBloscLZ:
		return blosclzEncodeRuns(b)
	case bloscLZ4:
		c := make([]byte, lz4.CompressBlockBound(len(b)))
		n, err := lz4.CompressBlock(b, c, nil)
		if err != nil || n == 0 {
			return b
		}
		return c[:n]
	case bloscSnappy:
		return snappy.Encode(nil, b)
	case bloscZlib:
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(b)
		w.Close()
		return z.Bytes()
	default:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(b, nil)
	}
}

// blosclzEncodeRuns writes b as blosclz: runs of 4 or more of one byte as one literal and a
// back reference of distance 1 (lengths past 8 with extension bytes), all else as literal
// runs, the stream ending in literals as blosclz's must.
func blosclzEncodeRuns(b []byte) []byte {
	var out, lit []byte
	flush := func() {
		for len(lit) > 0 {
			n := min(32, len(lit))
			out = append(out, byte(n-1))
			out = append(out, lit[:n]...)
			lit = lit[n:]
		}
	}
	for i := 0; i < len(b); {
		r := 1
		for i+r < len(b) && b[i+r] == b[i] {
			r++
		}
		if r < 5 || i+r == len(b) { // the last bytes stay literals
			lit = append(lit, b[i])
			i++
			continue
		}
		lit = append(lit, b[i])
		flush()
		n := r - 1 // copied from the byte before
		if n-2 < 7 {
			out = append(out, byte((n-2)<<5), 0)
		} else {
			out = append(out, 7<<5)
			for k := n - 2 - 7; ; k -= 255 {
				if k < 255 {
					out = append(out, byte(k))
					break
				}
				out = append(out, 255)
			}
			out = append(out, 0)
		}
		i += r
	}
	flush()
	return out
}

// shuffleBytes is the shuffle unshuffle undoes: byte j of every element, then byte j+1.
func shuffleBytes(dst, src []byte, size int) {
	n := len(src) / size
	for i := range n {
		for j := range size {
			dst[j*n+i] = src[i*size+j]
		}
	}
	copy(dst[n*size:], src[n*size:])
}

// bitshuffleBits is the transpose unbitshuffle undoes, bit by bit: bit j of byte b of element
// i goes to row 8b+j, at bit i%8 of the row's byte i/8.
func bitshuffleBits(dst, src []byte, size int) {
	n := len(src) / size
	clear(dst)
	for i := range n {
		for b := range size {
			for j := range 8 {
				if src[i*size+b]>>j&1 != 0 {
					row := 8*b + j
					dst[row*n/8+i/8] |= 1 << (i % 8)
				}
			}
		}
	}
}

// Frames made here read back, with every compressor, shuffle, element sizes of 1 to 24 bytes,
// split and unsplit blocks and a short last block; into one byte less they are errOverrun;
// cut short anywhere they are errors; 0xff bytes are an error. No input panics.
func TestBloscFrames(t *testing.T) {
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(i / 700 * 3) // runs, and smooth values across elements
		if i%97 == 0 {
			data[i] = byte(i)
		}
	}
	s := new(scratch)
	for codec := range bloscCodecs {
		for _, flags := range []byte{0, bloscShuffle, bloscBitshuffle, bloscShuffle | bloscNoSplit} {
			for _, typesize := range []int{1, 2, 4, 8, 24} {
				for _, bs := range []int{512, 4096, 4104, len(data)} {
					bs = max(bs/typesize*typesize, 1)
					name := fmt.Sprintf("%s flags %#x typesize %d block %d", bloscCodecName[codec], flags, typesize, bs)
					frame := bloscEncode(t, data, codec, flags, typesize, bs, false)
					dst := make([]byte, len(data))
					if k, err := s.bloscDecode(dst, frame); err != nil || k != len(data) || !bytes.Equal(dst, data) {
						t.Fatalf("%s: %d bytes, %v; want the data back", name, k, err)
					}
					if _, err := s.bloscDecode(dst[:len(dst)-1], frame); !errors.Is(err, errOverrun) {
						t.Errorf("%s into one byte less: %v, want errOverrun", name, err)
					}
					for cut := 1; cut < len(frame); cut += 1 + len(frame)/5 {
						if k, err := s.bloscDecode(dst, frame[:len(frame)-cut]); err == nil && k == len(data) {
							t.Errorf("%s cut by %d bytes: no error and all the data", name, cut)
						}
					}
				}
			}
		}
	}
	if _, err := s.bloscDecode(make([]byte, 64), bytes.Repeat([]byte{0xff}, 64)); err == nil {
		t.Error("0xff bytes: no error")
	}
}

// The number of streams per block follows c-blosc's rule, for frames without the no-split
// flag (older writers) as with it: frames whose streams are stored as they are read back only
// when the decoder expects as many streams, of the sizes the rule gives.
func TestBloscSplitRule(t *testing.T) {
	data := make([]byte, 4000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	s := new(scratch)
	for _, c := range []struct {
		typesize, bs int
		flags        byte
		splits       int // of the first block
	}{
		{4, 512, 0, 4},             // 128 elements: split
		{4, 508, 0, 1},             // 127 elements: one stream
		{16, 2048, 0, 16},          // 16-byte elements, 128 of them: split
		{17, 17 * 200, 0, 1},       // over 16 bytes: one stream
		{4, 512, bloscNoSplit, 1},  // the flag
		{8, 4000, bloscShuffle, 8}, // the only block, whole: split
	} {
		if got := bloscSplits(c.flags, c.typesize, c.bs, false); got != c.splits {
			t.Fatalf("%+v: the test's rule says %d streams", c, got)
		}
		frame := bloscEncode(t, data, bloscLZ4, c.flags, c.typesize, c.bs, true)
		dst := make([]byte, len(data))
		if k, err := s.bloscDecode(dst, frame); err != nil || !bytes.Equal(dst[:k], data) || k != len(data) {
			t.Errorf("%+v: %d bytes, %v", c, k, err)
		}
		// streams cut by the other rule (the flag flipped back) are refused
		if bloscSplits(c.flags^bloscNoSplit, c.typesize, c.bs, false) != c.splits {
			other := bloscEncode(t, data, bloscLZ4, c.flags^bloscNoSplit, c.typesize, c.bs, true)
			other[2] ^= bloscNoSplit
			if k, err := s.bloscDecode(dst, other); err == nil && bytes.Equal(dst[:k], data) {
				t.Errorf("%+v: streams cut the other way read as the data", c)
			}
		}
	}
}

// Forged frames are errors, never a panic nor an allocation beyond the chunk's size.
func TestBloscForged(t *testing.T) {
	data := bytes.Repeat([]byte("blosc frame "), 100) // 1200 bytes
	good := bloscEncode(t, data, bloscLZ4, bloscShuffle, 4, 512, false)
	set := func(i int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[i:], v)
		return b
	}
	setByte := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	memcpyed := append([]byte{2, 1, bloscMemcpyed, 1}, make([]byte, 12)...)
	binary.LittleEndian.PutUint32(memcpyed[4:], 1200)
	binary.LittleEndian.PutUint32(memcpyed[8:], 1200)
	binary.LittleEndian.PutUint32(memcpyed[12:], 1200+16)
	memShort := append(bytes.Clone(memcpyed), make([]byte, 1000)...) // 184 bytes short
	memLong := append(bytes.Clone(memcpyed), make([]byte, 1300)...)
	binary.LittleEndian.PutUint32(memLong[12:], 1300+16)
	dst := make([]byte, len(data))
	for name, src := range map[string][]byte{
		"short header":           good[:15],
		"version 1":              setByte(0, 1),
		"version 3":              setByte(0, 3),
		"reserved flag":          setByte(2, good[2]|bloscReserved),
		"compressor 7":           setByte(2, good[2]|7<<5),
		"compressor version 2":   setByte(1, 2),
		"element size 0":         setByte(3, 0),
		"block size 0":           set(8, 0),
		"block over the data":    set(8, 1201),
		"frame longer than src":  set(12, uint32(len(good)+1)),
		"frame under 16 bytes":   set(12, 15),
		"block offset past end":  set(16, 1<<31),
		"block offset in header": set(16, 2),
		"stream size past end":   set(int(binary.LittleEndian.Uint32(good[16:])), 1<<30),
		"too many blocks":        set(8, 1),
		"memcpyed, short":        memShort,
		"memcpyed, size wrong":   memLong,
		"block not whole splits": bloscEncode(t, data, bloscLZ4, 0, 4, 514, true),
	} {
		if k, err := new(scratch).bloscDecode(dst, src); err == nil {
			t.Errorf("%s: %d bytes, no error", name, k)
		}
	}
	// a frame claiming 2 GiB is refused before anything is allocated for it
	s := new(scratch)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := s.bloscDecode(dst, set(4, 1<<31))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errOverrun) {
		t.Errorf("frame of 2 GiB into %d bytes: %v, want errOverrun", len(dst), err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<16 {
		t.Errorf("refusing 2 GiB allocated %d bytes", grew)
	}
}

// blosclz streams: literals, back references near and far (16-bit distance), long ones
// (extension bytes) and overlapping ones read as they mean; forged ones are errors.
func TestBlosclz(t *testing.T) {
	lits := func(b []byte) []byte { // b as literal runs of 32
		var out []byte
		for len(b) > 0 {
			n := min(32, len(b))
			out = append(append(out, byte(n-1)), b[:n]...)
			b = b[n:]
		}
		return out
	}
	base := make([]byte, 8300)
	for i := range base {
		base[i] = byte(i*31 + i/256)
	}
	var far []byte
	far = append(far, lits(base)...)
	// length 3+7-1+5 = 14, distance 8191+1+0x0010: copies from 8300-8208 = 92
	far = append(far, 7<<5|31, 5, 255, 0x00, 0x10)
	far = append(far, lits([]byte("end"))...)
	wantFar := append(append(bytes.Clone(base), base[92:92+14]...), "end"...)

	// "ab" then a reference of length 3+6-1 = 8, distance 2 (overlapping), then one of length
	// 3+7-1+255+255+3 = 522, distance 1, then "!"
	over := []byte{1, 'a', 'b', 6 << 5, 1}
	over = append(over, 7<<5, 255, 255, 3, 0, 0, '!')
	wantOver := append([]byte("ababababab"), append(bytes.Repeat([]byte{'b'}, 522), '!')...)
	// the first byte's top bits are not read: 0xe1 is a run of 2 literals there
	first := []byte{0xe1, 'x', 'y'}

	for name, c := range map[string]struct{ src, want []byte }{
		"far": {far, wantFar}, "overlapping": {over, wantOver}, "first byte": {first, []byte("xy")},
		"runs": {blosclzEncodeRuns(wantOver), wantOver}, "empty": {nil, nil},
	} {
		dst := make([]byte, len(c.want))
		if k, err := blosclzDecode(dst, c.src); err != nil || !bytes.Equal(dst[:k], c.want) || k != len(c.want) {
			t.Errorf("%s: %d bytes, %v", name, k, err)
		}
		if len(c.want) > 0 {
			if _, err := blosclzDecode(dst[:len(dst)-1], c.src); !errors.Is(err, errOverrun) {
				t.Errorf("%s into one byte less: %v, want errOverrun", name, err)
			}
		}
		for cut := 1; cut < len(c.src); cut++ {
			if k, err := blosclzDecode(dst, c.src[:len(c.src)-cut]); err == nil && k == len(c.want) {
				t.Errorf("%s cut by %d: no error and all the data", name, cut)
			}
		}
	}
	for name, src := range map[string][]byte{
		"reference before the start": {0, 'a', 1 << 5, 5, 0},
		"far before the start":       {0, 'a', 1<<5 | 31, 255, 0, 0, 0},
		"ends with a reference":      {1, 'a', 'b', 1 << 5, 1},
		"literals cut":               {5, 'a', 'b'},
		"extension cut":              {0, 'a', 7 << 5, 255},
		"far distance cut":           {0, 'a', 1<<5 | 31, 255, 0},
	} {
		if k, err := blosclzDecode(make([]byte, 100), src); err == nil {
			t.Errorf("%s: %d bytes, no error", name, k)
		}
	}
}

// FuzzBlosc decodes arbitrary bytes as a Blosc frame and as a blosclz stream into a chunk of
// arbitrary size: no panic, nothing written beyond the chunk, errOverrun only as an error.
func FuzzBlosc(f *testing.F) {
	data := bytes.Repeat([]byte("fuzz me, Blosc "), 200)
	for codec := range bloscCodecs {
		for _, flags := range []byte{0, bloscShuffle, bloscBitshuffle | bloscNoSplit} {
			f.Add(bloscEncode(f, data, codec, flags, 4, 1024, false), uint16(len(data)))
		}
	}
	f.Add(blosclzEncodeRuns(data), uint16(len(data)))
	s := new(scratch)
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		dst := make([]byte, size)
		if k, err := s.bloscDecode(dst, src); k > len(dst) || k < 0 {
			t.Fatalf("Blosc: %d bytes into %d (%v)", k, len(dst), err)
		}
		if k, err := blosclzDecode(dst, src); k > len(dst) || k < 0 {
			t.Fatalf("blosclz: %d bytes into %d (%v)", k, len(dst), err)
		}
	})
}
