package hdf5

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// readAll reads dataset path of the file name whole.
func readAll(t *testing.T, name, path string) (*Dataset, []byte) {
	t.Helper()
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	o, err := f.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := o.Dataset()
	if err != nil {
		t.Fatalf("%s %s: %v", name, path, err)
	}
	buf := make([]byte, d.Len()*uint64(d.Type.Size))
	if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
		t.Fatalf("%s %s: %v", name, path, err)
	}
	return d, buf
}

// The HDF Group's example files for its bzip2, LZF, LZ4, bitshuffle, Blosc and Zstandard
// plugins (testdata/plugins, from github.com/HDFGroup/hdf5_plugins) read as the examples wrote
// them: DS1[i][j] = i*j - j as int32 (all but Zstandard's; Blosc's with lz4hc, byte shuffle,
// as its h5ex_d_blosc.ddl dumps it), and byte k of
// the Zstandard example's 2 x 512 x 1024 uint8 is k mod 256.
func TestPluginFilters(t *testing.T) {
	files, _ := filepath.Glob("testdata/plugins/h5ex_d_*.h5")
	if len(files) != 9 {
		t.Fatalf("%d example files in testdata/plugins, want 9", len(files))
	}
	for _, name := range files {
		d, buf := readAll(t, name, "/DS1")
		want := map[string]string{"bzip2": "bzip2", "lzf": "lzf", "lz4": "lz4", "zstd": "zstd", "bshuf": "bitshuffle", "blosc": "blosc"}
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "h5ex_d_"), ".h5")
		if fl := d.Filters(); len(fl) != 1 || fl[0] != want[strings.TrimPrefix(base, "np")] {
			t.Errorf("%s: filters %v", name, fl)
		}
		bad := 0
		if base == "zstd" {
			for k, b := range buf {
				if b != byte(k) {
					bad++
				}
			}
		} else {
			cols := d.Dims[1]
			for k := 0; k < len(buf)/4; k++ {
				i, j := int32(uint64(k)/cols), int32(uint64(k)%cols)
				if v := int32(binary.LittleEndian.Uint32(buf[4*k:])); v != i*j-j {
					bad++
				}
			}
		}
		if bad != 0 || len(buf) == 0 {
			t.Errorf("%s: %d of %d bytes or values differ from the example's", name, bad, len(buf))
		}
	}
}

// Bitshuffle, alone and with LZ4 (testdata/plugins/bitshuffle.h5, written by h5py through
// the HDF Group's bitshuffle plugin) and with Zstandard (plugins/bitshuffle_zstd.h5, by
// bshuf_zstd.py through that plugin built with Zstandard): every dataset reads as its copy
// without filters, with the default block size and a block of 64 elements, a short last block,
// chunks whose last elements do not fill a group of 8 (or hold fewer than 8), 1- to 8-byte
// elements of either byte order, zstd levels 0 to 22.
func TestBitshuffle(t *testing.T) {
	for file, names := range map[string][]string{
		"bitshuffle.h5": {"lz4_f4", "lz4_i2", "lz4_i8_block64", "none_u1", "none_f8"},
		"bitshuffle_zstd.h5": {"zstd_f4", "zstd_i2be", "zstd_i8_block64", "zstd_u1", "zstd_u2_tiny",
			"zstd_f8_level0", "zstd_f8_level22"},
	} {
		file = "testdata/plugins/" + file
		for _, name := range names {
			d, got := readAll(t, file, name)
			_, want := readAll(t, file, name+"_plain")
			if !bytes.Equal(got, want) {
				t.Errorf("%s (filters %v): differs from %s_plain", name, d.Filters(), name)
			}
			if fl := d.filters; len(fl) != 1 || fl[0].id != filterBitshuffle || len(fl[0].params) < 5 ||
				(fl[0].params[4] == bshufZstd) != strings.HasPrefix(name, "zstd") {
				t.Errorf("%s: filters %+v, want bitshuffle, with Zstandard as the name says", name, fl)
			}
		}
	}
}

// h5py's LZF filter: every dataset of testdata/lzf.h5 (gen.py) reads as its copy without
// filters, including chunks LZF could not shrink (stored as they are, marked in the chunk's
// filter mask), shuffle before LZF, and edge chunks.
func TestLZF(t *testing.T) {
	for _, name := range []string{"noise", "ramp", "shuffled", "bytes"} {
		d, got := readAll(t, "testdata/lzf.h5", name)
		_, want := readAll(t, "testdata/lzf.h5", name+"_plain")
		if !bytes.Equal(got, want) {
			t.Errorf("%s (filters %v): differs from %s_plain", name, d.Filters(), name)
		}
	}
}

// Each decoder fills exactly what the chunk holds: a stream that decodes to more is refused
// (errOverrun) without producing more than the chunk's bytes, truncated or malformed input is
// an error, never a panic.
func TestFilterDecoders(t *testing.T) {
	data := bytes.Repeat([]byte("mlfeed chunk "), 1000) // 13000 bytes
	s := new(scratch)
	type dec struct {
		name   string
		encode func(t *testing.T, b []byte) []byte
		decode func(dst, src []byte) (int, error)
	}
	decs := []dec{
		{"lzf", lzfEncodeRuns, lzfDecode},
		{"lzo", lzoEncodeRuns, lzoDecode},
		{"lz4", lz4Frame, lz4Decode},
		{"bzip2", bzip2Encode, bzip2Decode},
		{"zstd", zstdEncode, s.zstdDecode},
		{"zstd stream", zstdStream, s.zstdDecode},
		{"bitshuffle zstd", bshufZstdFrame, func(dst, src []byte) (int, error) {
			return s.bitshuffleDecode(dst, src, []uint32{0, 4, 4, 0, bshufZstd, 3})
		}},
	}
	for _, d := range decs {
		src := d.encode(t, data)
		dst := make([]byte, len(data))
		if k, err := d.decode(dst, src); err != nil || k != len(data) || !bytes.Equal(dst, data) {
			t.Errorf("%s: %d bytes, %v; want the data back", d.name, k, err)
		}
		short := make([]byte, len(data)-1)
		if _, err := d.decode(short, src); !errors.Is(err, errOverrun) {
			t.Errorf("%s into one byte less: %v, want errOverrun", d.name, err)
		}
		for cut := 1; cut < len(src); cut += 1 + len(src)/7 {
			if k, err := d.decode(dst, src[:len(src)-cut]); err == nil && k == len(data) {
				t.Errorf("%s cut by %d bytes: no error and all the data", d.name, cut)
			}
		}
		if _, err := d.decode(dst, bytes.Repeat([]byte{0xff}, 64)); err == nil {
			t.Errorf("%s of 0xff bytes: no error", d.name)
		}
	}
}

// A Zstandard frame that claims far more than the chunk is refused before the decoder
// allocates for it; one that holds far more without saying so is stopped at zstdWindow.
func TestZstdBomb(t *testing.T) {
	zeros := make([]byte, 256<<20)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	stated := enc.EncodeAll(zeros, nil) // the content size is in the frame's header
	enc.Close()
	var b bytes.Buffer
	enc, _ = zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	enc.Write(zeros)
	enc.Close()
	unstated := b.Bytes()
	zeros = nil
	if h := new(zstd.Header); h.Decode(unstated) != nil || h.HasFCS {
		t.Fatalf("the stream states its size: %+v", h)
	}
	s := new(scratch)
	dst := make([]byte, 4096)
	for _, c := range []struct {
		name  string
		frame []byte
	}{{"stated", stated}, {"unstated", unstated}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := s.zstdDecode(dst, c.frame)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, errOverrun) {
			t.Errorf("256 MiB into 4 KiB, size %s: %v, want errOverrun", c.name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*zstdWindow {
			t.Errorf("refusing 256 MiB, size %s, allocated %d bytes", c.name, grew)
		}
	}
}

// lzfEncodeRuns writes b as LZF literal runs and, where a run of 13 bytes repeats the one
// before, back references: enough to exercise both kinds of token.
func lzfEncodeRuns(t *testing.T, b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		if i >= 13 && i+13 <= len(b) && bytes.Equal(b[i:i+13], b[i-13:i]) {
			n, dist := 13, 12 // length 13, distance 13
			out = append(out, byte(7<<5|dist>>8), byte(n-2-7), byte(dist))
			i += n
			continue
		}
		n := min(32, len(b)-i)
		out = append(out, byte(n-1))
		out = append(out, b[i:i+n]...)
		i += n
	}
	return out
}

// lzoEncodeRuns writes b, which repeats with a period of 13 bytes, as an LZO1X stream: its
// first 13 bytes as the stream's opening literal run, then by turns an M2 match (8 bytes at
// distance 13) and 1 literal and an M1 match (2 bytes) and 2 literals, up to byte 200, then
// an M3 match of the rest (its length extended) and the end marker.
func lzoEncodeRuns(t *testing.T, b []byte) []byte {
	const p = 13
	for i := p; i < len(b); i++ {
		if b[i] != b[i-p] {
			t.Fatalf("byte %d breaks the period", i)
		}
	}
	out := append([]byte{17 + p}, b[:p]...)
	i := p
	for i < 200 {
		out = append(out, 7<<5|(p-1)&7<<2|1, (p-1)>>3, b[i+8]) // M2, then state 1
		i += 9
		out = append(out, (p-1)&3<<2|2, (p-1)>>2, b[i+2], b[i+3]) // M1, then state 2
		i += 4
	}
	n := len(b) - i
	if n < 34 {
		t.Fatalf("%d bytes left for the M3 match", n)
	}
	out = append(out, 32)
	for ; n-33 > 255; n -= 255 {
		out = append(out, 0)
	}
	return append(out, byte(n-33), (p-1)<<2, 0, 0x11, 0, 0)
}

// Forged LZO1X streams are errors: references before the start, input cut anywhere, bytes
// after the end marker, lengths beyond the chunk (before their extension is read out).
func TestLZOForged(t *testing.T) {
	for name, src := range map[string][]byte{
		"empty":                     {},
		"no end marker":             {17 + 3, 'a', 'b', 'c'},
		"M2 before the start":       {17 + 3, 'a', 'b', 'c', 0xf0, 1},
		"M1 before the start":       {17 + 1, 'a', 2, 1},
		"state 4 M1 reaches back":   {17 + 4, 'a', 'b', 'c', 'd', 0, 0},
		"M4 before the start":       {17 + 3, 'a', 'b', 'c', 17, 4, 0},
		"literal run cut":           {0, 0, 5, 'a'},
		"extension cut":             {17 + 3, 'a', 'b', 'c', 32, 0, 0},
		"distance cut":              {17 + 3, 'a', 'b', 'c', 33, 4},
		"trailing literals cut":     {17 + 3, 'a', 'b', 'c', 0x40 | 3, 0},
		"bytes after the end":       {17 + 1, 'a', 0x11, 0, 0, 0},
		"end marker cut":            {17 + 1, 'a', 0x11, 0},
		"zeros past the chunk size": append([]byte{0}, make([]byte, 64)...),
	} {
		dst := make([]byte, 1000)
		if k, err := lzoDecode(dst, src); err == nil || k > len(dst) {
			t.Errorf("%s: %d bytes, %v", name, k, err)
		}
	}
	// the decoder's smallest streams: nothing, and 3 literals then a match of 4 at distance 3
	for _, c := range []struct {
		src  []byte
		want string
	}{{[]byte{0x11, 0, 0}, ""}, {[]byte{17 + 3, 'a', 'b', 'c', 0x60 | 2<<2, 0, 0x11, 0, 0}, "abcabca"}} {
		dst := make([]byte, 100)
		if k, err := lzoDecode(dst, c.src); err != nil || string(dst[:k]) != c.want {
			t.Errorf("% x: %q, %v; want %q", c.src, dst[:k], err, c.want)
		}
	}
}

// FuzzLZO decodes arbitrary bytes as an LZO1X stream into a chunk of arbitrary size: no
// panic, nothing written beyond the chunk.
func FuzzLZO(f *testing.F) {
	data := bytes.Repeat([]byte("fuzz me, LZO "), 100)
	f.Add(lzoEncodeRuns(&testing.T{}, data), uint16(len(data)))
	f.Add([]byte{17 + 3, 'a', 'b', 'c', 0x60 | 2<<2, 0, 0x11, 0, 0}, uint16(16))
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		dst := make([]byte, size)
		if k, err := lzoDecode(dst, src); k > len(dst) || k < 0 {
			t.Fatalf("%d bytes into %d (%v)", k, len(dst), err)
		}
	})
}

// lz4Frame writes b as the HDF Group's LZ4 filter does, in blocks of 4096 bytes.
func lz4Frame(t *testing.T, b []byte) []byte {
	const block = 4096
	out := binary.BigEndian.AppendUint64(nil, uint64(len(b)))
	out = binary.BigEndian.AppendUint32(out, block)
	for i := 0; i < len(b); i += block {
		in := b[i:min(i+block, len(b))]
		c := make([]byte, lz4.CompressBlockBound(len(in)))
		n, err := lz4.CompressBlock(in, c, nil)
		if err != nil || n == 0 || n >= len(in) {
			c, n = in, len(in)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(n))
		out = append(out, c[:n]...)
	}
	return out
}

// bzip2Encode compresses b with the bzip2 command, or skips the test without it.
func bzip2Encode(t *testing.T, b []byte) []byte {
	cmd := exec.Command("bzip2", "-c")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("no bzip2 command: %v", err)
	}
	if r, err := bzip2.NewReader(bytes.NewReader(out)).Read(make([]byte, 1)); r != 1 || err != nil {
		t.Fatalf("bzip2 output unreadable: %v", err)
	}
	return out
}

func zstdEncode(t *testing.T, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// bshufZstdFrame writes b as bitshuffle with Zstandard writes a chunk of 4-byte elements: the
// size (8 bytes, big-endian) and the block size in bytes (4), then blocks of the default 2048
// elements (the last one the whole groups of 8 left), each bitshuffled, a Zstandard frame
// after its size (4), then the elements that do not fill 8 as they are.
func bshufZstdFrame(t *testing.T, b []byte) []byte {
	const elem, block = 4, 2048
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	out := binary.BigEndian.AppendUint64(nil, uint64(len(b)))
	out = binary.BigEndian.AppendUint32(out, block*elem)
	n := len(b) / elem / 8 * 8
	for i := 0; i < n; i += block {
		in := b[i*elem : min(i+block, n)*elem]
		shuffled := make([]byte, len(in))
		bitshuffleBits(shuffled, in, elem)
		f := enc.EncodeAll(shuffled, nil)
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return append(out, b[n*elem:]...)
}

// zstdStream writes b as a Zstandard stream: no content size in the frame's header.
func zstdStream(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(b[:len(b)/2])
	enc.Flush() // the frame's header goes out before the size is known
	enc.Write(b[len(b)/2:])
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if h.Decode(out.Bytes()) != nil || h.HasFCS {
		t.Fatalf("the stream states its size: %+v", h)
	}
	return out.Bytes()
}

// Enumerations of integers and bitfields read as their integers, as h5py reads them:
// testdata/enum.h5 (gen.py) holds each beside NAME_int, the integers h5py read.
func TestEnumAndBitfield(t *testing.T) {
	for _, c := range []struct{ name, typ string }{
		{"mask", "bool enum"}, {"colour", "int16 big-endian enum"},
		{"bits8", "uint8 bitfield"}, {"bits32", "uint32 big-endian bitfield"},
	} {
		d, got := readAll(t, "testdata/enum.h5", c.name)
		_, want := readAll(t, "testdata/enum.h5", c.name+"_int")
		if d.Type.String() != c.typ {
			t.Errorf("%s: type %q, want %q", c.name, d.Type, c.typ)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: differs from %s_int", c.name, c.name)
		}
	}
}

// Layout messages of versions 1 and 2 (HDF5 1.4 and 1.6) end after the chunk's dimensions,
// the last of which is the element's size: a rank-1 chunked dataset's message is 24 bytes,
// and reading one more field made such files "short layout message". PyTables' attr-u16.h5
// (testdata/pytables) has one: .../digital/order, int32 0 to 7.
func TestLayoutVersion1Chunked(t *testing.T) {
	d, got := readAll(t, "testdata/pytables/attr-u16.h5", "/wfm_group0/traces/trace0/render_info/digital/order")
	if d.Layout() != "chunked" || len(got) != 32 {
		t.Fatalf("layout %s, %d bytes", d.Layout(), len(got))
	}
	for i := range 8 {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != uint32(i) {
			t.Errorf("value %d: %d", i, v)
		}
	}
}

// Forged bitshuffle chunks are errors, never more than the chunk: a header claiming more, a
// block that is not a multiple of 8 elements, a truncated block, more bytes than the chunk;
// with Zstandard, blocks whose stored size lies, frames that claim or hold more or fewer bytes
// than their block, a frame that is no frame, bytes after the left-over elements.
func TestBitshuffleForged(t *testing.T) {
	lz4 := []uint32{0, 4, 4, 0, bshufLZ4}
	zst := []uint32{0, 4, 4, 0, bshufZstd, 3}
	head := func(total uint64, blockBytes uint32, rest ...byte) []byte {
		b := binary.BigEndian.AppendUint64(nil, total)
		return append(binary.BigEndian.AppendUint32(b, blockBytes), rest...)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	frame := func(n int) []byte { return enc.EncodeAll(bytes.Repeat([]byte{7}, n), nil) }
	// block appends a block of stored size n holding f
	block := func(b []byte, n int, f []byte) []byte {
		return append(binary.BigEndian.AppendUint32(b, uint32(n)), f...)
	}
	f64, f128, f32 := frame(64), frame(128), frame(32)
	var stream bytes.Buffer // 128 bytes without a stated size
	zw, _ := zstd.NewWriter(&stream)
	zw.Write(make([]byte, 64))
	zw.Flush()
	zw.Write(make([]byte, 64))
	zw.Close()
	dst := make([]byte, 64)
	for name, c := range map[string]struct {
		src    []byte
		params []uint32
	}{
		"claims more":         {head(1<<40, 32), lz4},
		"odd block":           {head(64, 12), lz4},
		"truncated block":     {head(64, 64, 0, 0, 0, 9, 1, 2), lz4},
		"no element size":     {make([]byte, 64), []uint32{0, 4}},
		"more than the chunk": {make([]byte, 66), []uint32{0, 4, 2, 0, bshufNone}},
		"short header":        {[]byte{0, 0, 0}, lz4},
		"unknown compression": {head(64, 64), []uint32{0, 4, 4, 0, 9}},

		"zstd claims more":           {head(1<<40, 64), zst},
		"zstd odd block":             {head(64, 20), zst},
		"zstd stored size past end":  {block(head(64, 64), len(f64)+1, f64), zst},
		"zstd stored size short":     {block(head(64, 64), len(f64)-1, f64), zst},
		"zstd stored size zero":      {block(head(64, 64), 0, nil), zst},
		"zstd no block size":         {head(64, 64, 0, 0), zst},
		"zstd frame claims more":     {block(head(64, 64), len(f128), f128), zst},
		"zstd frame claims less":     {block(head(64, 64), len(f32), f32), zst},
		"zstd stream holds more":     {block(head(64, 64), stream.Len(), stream.Bytes()), zst},
		"zstd not a frame":           {block(head(64, 64), 8, bytes.Repeat([]byte{0xff}, 8)), zst},
		"zstd two blocks in one":     {block(block(head(64, 32), len(f64), f64), 0, nil), zst},
		"zstd bytes after leftovers": {append(block(head(64, 64), len(f64), f64), 1), zst},
		"zstd blocks missing":        {block(head(64, 32), len(f32), f32), zst},
	} {
		if k, err := new(scratch).bitshuffleDecode(dst, c.src, c.params); err == nil {
			t.Errorf("%s: %d bytes, no error", name, k)
		}
	}
	if _, err := new(scratch).bitshuffleDecode(dst, head(1<<40, 32), lz4); !errors.Is(err, errOverrun) {
		t.Errorf("claims more: %v, want errOverrun", err)
	}
	if k, err := new(scratch).bitshuffleDecode(dst, block(head(64, 64), len(f64), f64), zst); err != nil || k != 64 {
		t.Errorf("a good chunk of the forged ones: %d bytes, %v", k, err)
	}
	// 64 MiB stated in a frame for an 8 KiB block: refused before the decoder allocates for it
	big := enc.EncodeAll(make([]byte, 64<<20), nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = new(scratch).bitshuffleDecode(make([]byte, 8192), block(head(8192, 8192), len(big), big), zst)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Error("64 MiB frame in an 8 KiB block: no error")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("refusing a 64 MiB frame in an 8 KiB block allocated %d bytes", grew)
	}
}

// A single-segment Zstandard frame smaller than zstd's smallest window (1 KiB), as Blosc
// writes for its short blocks, decodes with a fresh scratch: the decoder takes the smallest
// window for its window, and a limit of the frame's own size refused it (when the pooled
// scratch had not decoded a larger chunk before).
func TestZstdSmallSingleSegment(t *testing.T) {
	want := make([]byte, 1000)
	for i := range want {
		want[i] = byte(i * i % 251)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	frame := enc.EncodeAll(want, nil)
	enc.Close()
	if h := new(zstd.Header); h.Decode(frame) != nil || !h.SingleSegment || h.FrameContentSize != 1000 {
		t.Fatalf("not a single-segment frame of 1000 bytes: %+v", h)
	}
	for _, n := range []int{1000, 4096} { // fresh, then a decoder made for a larger chunk
		s := new(scratch)
		if n > 1000 {
			s.zstdDecode(make([]byte, n), frame)
		}
		dst := make([]byte, 1000)
		if k, err := s.zstdDecode(dst, frame); err != nil || k != 1000 || !bytes.Equal(dst, want) {
			t.Errorf("scratch after a %d-byte chunk: %d bytes, %v", n, k, err)
		}
	}
}

// Every dataset of the files in testdata/lzo (written by make.py with PyTables 3.7.0 on
// liblzo2 2.10) reads as PyTables read it back: int8 to float64 with and without byte
// shuffle, complevels 1 to 9, partial edge chunks, a 2-D EArray, chunks LZO could not shrink
// (stored unfiltered, marked in their filter masks), long runs and compound Tables.
func TestLZOFiles(t *testing.T) { checkExpected(t, "testdata/lzo", "lzo", 19) }

// TestLZOFarM3: an M3 match reaches 16,384 bytes back, the distance that marks the end of the
// stream in an M4 only. The decoder took such an M3 for the end (a PyTables LZO chunk of
// bench/hdf5.sh's float features: "154428 bytes after the LZO end-of-stream marker", which
// liblzo and h5py read). Here: a run of 16,400 literals, an M3 of 4 bytes at distance 16,384,
// then the end.
func TestLZOFarM3(t *testing.T) {
	const lits = 16400
	src := []byte{0} // a literal run of 18 + 255*64 + 62 bytes
	src = append(src, make([]byte, 64)...)
	src = append(src, 62)
	for i := range lits {
		src = append(src, byte(i*7+i/251))
	}
	src = append(src, 32|2, 0xfc, 0xff) // M3: 2+2 bytes, distance 1 + 0xfffc>>2, no literals after
	src = append(src, 16|1, 0, 0)       // end of stream
	dst := make([]byte, lits+4)
	n, err := lzoDecode(dst, src)
	if err != nil || n != lits+4 {
		t.Fatalf("%d bytes, %v", n, err)
	}
	for i := range lits {
		if dst[i] != byte(i*7+i/251) {
			t.Fatalf("literal %d", i)
		}
	}
	if !bytes.Equal(dst[lits:], dst[lits-16384:lits-16384+4]) {
		t.Errorf("match % x, want % x", dst[lits:], dst[lits-16384:lits-16384+4])
	}
}

// TestFixedString: a fixed-length string's padding is dropped as h5py (numpy's bytes) drops
// it: up to the first NUL when NUL-terminated, the trailing NULs when NUL-padded, the
// trailing spaces when space-padded (the HDF Group's fixed_string_dset.h5, "sweet  ").
func TestFixedString(t *testing.T) {
	for _, c := range []struct {
		pad  uint8
		in   string
		want string
	}{
		{PadNullTerm, "ab\x00cd\x00", "ab"},
		{PadNull, "ab\x00cd\x00\x00", "ab\x00cd"},
		{PadSpace, "sweet  ", "sweet"},
		{PadSpace, "a b \x00", "a b"},
		{PadNull, "full", "full"},
	} {
		if got := (Datatype{Class: String, Pad: c.pad}).FixedString([]byte(c.in)); got != c.want {
			t.Errorf("pad %d %q: %q, want %q", c.pad, c.in, got, c.want)
		}
	}
}
