package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every dataset of the files in testdata/szip (written by make.py with h5py 3.7.0, HDF5
// 1.10.8 and libaec 1.0.6, and by h5repack) reads as h5py read it back: int8 to int64 and
// uint8 to uint64, float32 and float64, both byte orders, NN and EC, 8, 16 and 32 pixels per
// block, scanlines padded to whole blocks and not, edge chunks, zero blocks (runs to the end
// of a segment and of a reference sample interval), the second extension, every split k,
// uncompressed blocks, chunks stored unfiltered, shuffle before szip.
func TestSzipFiles(t *testing.T) { checkExpected(t, "testdata/szip", "szip", 41) }

// The HDF Group's example file h5ex_d_szip.h5 (testdata/szip, from rhdf5's test files):
// DS1[i][j] = i*j - j, 32 x 64 int32 in chunks of 4 x 8, NN, 8 pixels per block.
func TestSzipExample(t *testing.T) {
	d, buf := readAll(t, "testdata/szip/h5ex_d_szip.h5", "DS1")
	if fl := d.Filters(); len(fl) != 1 || fl[0] != "szip" || len(d.Dims) != 2 || d.Dims[0] != 32 || d.Dims[1] != 64 {
		t.Fatalf("filters %v, dims %v", fl, d.Dims)
	}
	for k := range len(buf) / 4 {
		i, j := int32(k/64), int32(k%64)
		if v := int32(binary.LittleEndian.Uint32(buf[4*k:])); v != i*j-j {
			t.Fatalf("DS1[%d][%d] = %d, want %d", i, j, v, i*j-j)
		}
	}
}

// Samples of 5, 12 and 20 bits (integers whose precision is less than their size, which
// HDF5 codes with as many bits per pixel; testdata/szip/precision.h5 holds their chunks): each
// chunk decodes to the bytes h5py read back.
func TestSzipPrecision(t *testing.T) {
	s := new(scratch)
	for _, name := range []string{"u5", "u12", "u12ec", "u20be"} {
		_, chunk := readAll(t, "testdata/szip/precision.h5", name+"/chunk")
		_, cd := readAll(t, "testdata/szip/precision.h5", name+"/cd_values")
		_, want := readAll(t, "testdata/szip/precision.h5", name+"/want")
		var params []uint32
		for i := 0; i+4 <= len(cd); i += 4 {
			params = append(params, binary.LittleEndian.Uint32(cd[i:]))
		}
		dst := make([]byte, len(want))
		k, err := s.szipDecode(dst, chunk, params)
		if err != nil || !bytes.Equal(dst[:k], want) {
			t.Errorf("%s (cd_values %v): %d bytes, %v", name, params, k, err)
		}
	}
}

// szipChunk is one stored chunk of an szip dataset: its bytes, the filter's parameters and
// the chunk's decoded size.
type szipChunk struct {
	src    []byte
	params []uint32
	size   int
}

// szipChunks returns the filtered chunks of the datasets paths of the file name whose last
// filter (the first undone) is szip.
func szipChunks(t testing.TB, name string, paths ...string) []szipChunk {
	t.Helper()
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []szipChunk
	for _, path := range paths {
		o, err := f.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := o.Dataset()
		if err != nil {
			t.Fatal(err)
		}
		if len(d.filters) == 0 || d.filters[len(d.filters)-1].id != filterSzip {
			continue
		}
		if err := d.loadIndex(); err != nil {
			t.Fatal(err)
		}
		last := len(d.filters) - 1
		for _, loc := range d.chunks {
			if loc.mask&(1<<last) != 0 {
				continue
			}
			b := make([]byte, loc.size)
			if err := f.readInto(b, loc.addr, "chunk"); err != nil {
				t.Fatal(err)
			}
			out = append(out, szipChunk{b, d.filters[last].params, int(d.chunkBytes)})
		}
	}
	return out
}

// szipBits writes an szip stream: bits, most significant first.
type szipBits struct {
	b []byte
	n uint // bits written
}

// put writes the k low bits of v.
func (w *szipBits) put(v uint32, k uint) {
	for i := int(k) - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (7 - w.n%8)
		w.n++
	}
}

// fs writes q as a fundamental sequence: q zeros, then a one.
func (w *szipBits) fs(q int) {
	for range q {
		w.put(0, 1)
	}
	w.put(1, 1)
}

// chunk returns the stream after HDF5's header: the decoded size, 32-bit little-endian.
func (w *szipBits) chunk(size uint32) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, size), w.b...)
}

// Streams forged bit by bit decode to what the coding options mean: uncompressed and split
// blocks, the second extension, zero blocks (a count, and ROS: to the end of the reference
// sample interval or of its 64-block segment), reference samples with the NN preprocessor
// (differences mapped past the nearer end of the range), 16-bit samples of both byte orders,
// scanlines padded to whole blocks, 32-bit pixels as byte planes.
func TestSzipForged(t *testing.T) {
	s := new(scratch)
	const ec8, nn = szipEC | szipLSB | szipRaw, szipNN | szipRaw
	decode := func(name string, w *szipBits, params []uint32, want []byte) {
		t.Helper()
		dst := make([]byte, len(want)+3) // room to spare: the header says how much is used
		k, err := s.szipDecode(dst, w.chunk(uint32(len(want))), params)
		if err != nil || !bytes.Equal(dst[:k], want) {
			t.Errorf("%s: %v (%v), want %v", name, dst[:k], err, want)
		}
	}

	// 8-bit samples without preprocessor, 8 per block, one block per RSI: a block stored as
	// it is (option 7), then one split with k = 2 (option 3)
	w := new(szipBits)
	w.put(7, 3)
	for v := range 8 {
		w.put(uint32(v+1), 8)
	}
	split := []byte{0, 1, 5, 9, 3, 2, 7, 4}
	w.put(3, 3)
	for _, v := range split {
		w.fs(int(v >> 2))
	}
	for _, v := range split {
		w.put(uint32(v&3), 2)
	}
	decode("uncompressed, split", w, []uint32{ec8, 8, 8, 8}, append([]byte{1, 2, 3, 4, 5, 6, 7, 8}, split...))

	// an RSI of 8 blocks: two zero blocks, one of second extension, then ROS (the 5 blocks
	// left of the RSI); then in the next RSI a zero block
	w = new(szipBits)
	w.put(0, 3)
	w.put(0, 1)
	w.fs(1)
	w.put(0, 3)
	w.put(1, 1)
	pairs := [][2]int{{1, 2}, {0, 0}, {3, 0}, {0, 4}}
	var want []byte
	want = append(want, make([]byte, 16)...)
	for _, p := range pairs {
		beta := p[0] + p[1]
		w.fs(beta*(beta+1)/2 + p[1])
		want = append(want, byte(p[0]), byte(p[1]))
	}
	w.put(0, 3)
	w.put(0, 1)
	w.fs(4)
	want = append(want, make([]byte, 40+8)...)
	w.put(0, 3)
	w.put(0, 1)
	w.fs(0)
	decode("zero blocks, second extension, ROS", w, []uint32{ec8, 8, 8, 64}, want)

	// an RSI of 128 blocks: 60 of them zero (fs 60: past 4 a count is one less), then ROS
	// ends the segment (4 blocks), then ROS ends the RSI (64 blocks)
	w = new(szipBits)
	w.put(0, 4)
	w.put(0, 1)
	w.fs(60)
	for range 2 {
		w.put(0, 4)
		w.put(0, 1)
		w.fs(4)
	}
	w.put(15, 4) // the next RSI: a block stored as it is
	for range 8 {
		w.put(0xabcd, 16)
	}
	want = make([]byte, 2*1024)
	for range 8 {
		want = append(want, 0xab, 0xcd)
	}
	decode("ROS to the segment's end, then the RSI's", w, []uint32{szipMSB | szipRaw, 8, 16, 1024}, want)

	// NN, 16-bit: a split block (k = 0) after its reference sample 1000, the differences
	// 0, 1, 2, 3, 4, 0, 0 mapped (even: up by half; odd: down by half, rounded up); then a
	// zero block after the reference sample 7
	for _, msb := range []bool{false, true} {
		w = new(szipBits)
		w.put(1, 4)
		w.put(1000, 16)
		for _, d := range []int{0, 1, 2, 3, 4, 0, 0} {
			w.fs(d)
		}
		w.put(0, 4)
		w.put(0, 1)
		w.put(7, 16)
		w.fs(0)
		mask := uint32(nn | szipLSB)
		var order binary.AppendByteOrder = binary.LittleEndian
		if msb {
			mask, order = nn|szipMSB, binary.BigEndian
		}
		want = nil
		for _, v := range []uint16{1000, 1000, 999, 1000, 998, 1000, 1000, 1000, 7, 7, 7, 7, 7, 7, 7, 7} {
			want = order.AppendUint16(want, v)
		}
		decode("NN reference samples", w, []uint32{mask, 8, 16, 8}, want)
	}

	// NN, 8-bit, one block per RSI: differences past the nearer end of the range (after 1, up
	// to 5; after 254, down to 129; after 255, down to 0), stored as they are; then second
	// extension after a reference sample (its first pair codes one difference)
	xs := [][]byte{{1, 5, 5, 254, 129, 255, 0, 3}, {254, 254, 247, 247, 250, 250, 250, 250}}
	w = new(szipBits)
	w.put(7, 3)
	w.put(uint32(xs[0][0]), 8)
	for i := 1; i < 8; i++ {
		w.put(nnMap(xs[0][i-1], xs[0][i], 255), 8)
	}
	w.put(0, 3)
	w.put(1, 1)
	w.put(uint32(xs[1][0]), 8)
	w.fs(seCode(0, nnMap(xs[1][0], xs[1][1], 255)))
	for i := 2; i < 8; i += 2 {
		w.fs(seCode(nnMap(xs[1][i-1], xs[1][i], 255), nnMap(xs[1][i], xs[1][i+1], 255)))
	}
	decode("NN range ends", w, []uint32{nn, 8, 8, 8}, append(xs[0], xs[1]...))

	// scanlines of 5 pixels padded to a block of 8: the padding is dropped
	w = new(szipBits)
	for line := range 3 {
		w.put(7, 3)
		for i := range 8 {
			w.put(uint32(10*line+i), 8)
		}
	}
	decode("padded scanlines", w, []uint32{ec8, 8, 8, 5}, []byte{0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21})

	// 32-bit pixels: 8-bit samples, every pixel's first byte, then every second byte, ...
	w = new(szipBits)
	w.put(7, 3)
	for _, v := range []uint32{1, 2, 3, 4, 5, 6, 7, 8} {
		w.put(v, 8)
	}
	decode("byte planes", w, []uint32{ec8, 8, 32, 8}, []byte{1, 3, 5, 7, 2, 4, 6, 8})
}

// nnMap is the NN preprocessor's mapping (CCSDS 121.0-B) of sample x after prev, samples of
// 0 to xmax: twice the difference where it is within theta (prev's distance to the nearer end
// of the range) up, twice less one down, theta plus its size beyond.
func nnMap(prev, x byte, xmax int) uint32 {
	p, d := int(prev), int(x)-int(prev)
	theta := min(p, xmax-p)
	switch {
	case d >= 0 && d <= theta:
		return uint32(2 * d)
	case d < 0 && -d <= theta:
		return uint32(-2*d - 1)
	case d < 0:
		return uint32(theta - d)
	}
	return uint32(theta + d)
}

// seCode is the second extension's codeword for the pair (a, b).
func seCode(a, b uint32) int { return int((a+b)*(a+b+1)/2 + b) }

// Malformed streams and parameters are errors, never a panic or more bytes than the chunk
// holds: a size past the chunk (up to 4 GiB, refused before anything is allocated), streams
// cut anywhere, second-extension codewords past the table, zero blocks past their reference
// sample interval, a run of zeros to the end, sizes that are not whole samples or pixels,
// parameters HDF5 never writes.
func TestSzipMalformed(t *testing.T) {
	s := new(scratch)
	ok := []uint32{szipNN | szipLSB | szipRaw, 8, 16, 1024}
	type forged struct {
		name   string
		src    []byte
		params []uint32
		size   int
		want   string
	}
	cases := []forged{
		{"no header", []byte{1, 0}, ok, 16, "EOF"},
		{"size past the chunk", []byte{17, 0, 0, 0}, ok, 16, "decodes to more"},
		{"4 GiB", []byte{0xff, 0xff, 0xff, 0xff, 0}, ok, 16, "decodes to more"},
		{"empty stream", []byte{16, 0, 0, 0}, ok, 16, "EOF"},
		{"zeros to the end", append([]byte{16, 0, 0, 0, 0x10}, make([]byte, 1000)...), ok, 16, "EOF"},
		{"odd bytes", []byte{15, 0, 0, 0, 0xff, 0xff}, ok, 16, "whole number of 2-byte samples"},
		{"odd pixels", []byte{6, 0, 0, 0, 0xff}, []uint32{szipRaw, 8, 32, 8}, 16, "whole number of 4-byte pixels"},
		{"3 parameters", []byte{16, 0, 0, 0}, ok[:3], 16, "3 parameters"},
		{"odd block", []byte{16, 0, 0, 0}, []uint32{0, 7, 16, 8}, 16, "7 pixels per block"},
		{"block of 64", []byte{16, 0, 0, 0}, []uint32{0, 64, 16, 8}, 16, "64 pixels per block"},
		{"block of 0", []byte{16, 0, 0, 0}, []uint32{0, 0, 16, 8}, 16, "0 pixels per block"},
		{"0 bits", []byte{16, 0, 0, 0}, []uint32{0, 8, 0, 8}, 16, "0 bits per pixel"},
		{"48 bits", []byte{16, 0, 0, 0}, []uint32{0, 8, 48, 8}, 16, "48 bits per pixel"},
		{"no scanline", []byte{16, 0, 0, 0}, []uint32{0, 8, 16, 0}, 16, "0 pixels per scanline"},
	}
	// a second-extension codeword of 91, past the table's 90
	w := new(szipBits)
	w.put(0, 3)
	w.put(1, 1)
	w.fs(91)
	cases = append(cases, forged{"SE codeword 91", w.chunk(8), []uint32{szipRaw, 8, 8, 8}, 8, "second-extension codeword 91"})
	// two zero blocks in an RSI of one
	w = new(szipBits)
	w.put(0, 3)
	w.put(0, 1)
	w.fs(1)
	cases = append(cases, forged{"zero blocks past the RSI", w.chunk(16), []uint32{szipRaw, 8, 8, 8}, 16, "zero blocks 2 past the end"})
	for _, c := range cases {
		dst := make([]byte, c.size)
		k, err := s.szipDecode(dst, c.src, c.params)
		if err == nil || k != 0 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d bytes, %v, want an error saying %q", c.name, k, err, c.want)
		}
	}

	// real chunks cut anywhere, or with a byte changed, never panic nor write past the chunk
	for _, c := range szipChunks(t, "testdata/szip/options.h5", "wave300_u2_nn16", "bursts_u2_ec32", "steps_i2_nn32")[:3] {
		dst := make([]byte, c.size)
		if k, err := s.szipDecode(dst, c.src, c.params); err != nil || k != c.size {
			t.Fatalf("whole chunk: %d bytes, %v", k, err)
		}
		whole := bytes.Clone(dst)
		// (a cut stream may still hold every bit the samples need: the rest of a padded
		// scanline's last block is not read)
		for n := 0; n < len(c.src); n++ {
			k, err := s.szipDecode(dst, c.src[:n], c.params)
			if err == nil && (k != c.size || !bytes.Equal(dst, whole)) || err != nil && (k != 0 || !errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Fatalf("chunk cut to %d of %d bytes: %d, %v", n, len(c.src), k, err)
			}
		}
		bad := bytes.Clone(c.src)
		for i := 4; i < len(bad); i++ {
			bad[i] ^= 0x5a
			if k, _ := s.szipDecode(dst, bad, c.params); k != 0 && k != c.size {
				t.Fatalf("byte %d changed: %d bytes", i, k)
			}
			bad[i] ^= 0x5a
		}
	}
}

// A chunk whose header states fewer bytes than the chunk holds is an error naming both
// sizes, and parameters HDF5 never writes make the dataset unsupported, naming them: a
// copy of testdata/szip/repack.h5 (version 1 object headers, no checksums) patched.
func TestSzipLyingFile(t *testing.T) {
	b, err := os.ReadFile("testdata/szip/repack.h5")
	if err != nil {
		t.Fatal(err)
	}
	c := szipChunks(t, "testdata/szip/repack.h5", "nn8_i2")[0]
	at := bytes.Index(b, c.src)
	if at < 0 {
		t.Fatal("chunk not found")
	}
	lying := bytes.Clone(b)
	binary.LittleEndian.PutUint32(lying[at:], uint32(c.size-2))
	name := filepath.Join(t.TempDir(), "lying.h5")
	if err := os.WriteFile(name, lying, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, _ := f.Get("nn8_i2")
	d, err := o.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, d.Len()*2)
	if err := d.ReadRows(buf, 0, d.Rows()); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "chunk decodes to 1534 bytes where 1536 are expected") {
		t.Errorf("header 2 bytes short: %v", err)
	}

	// the filter's parameters (mask 169, 8 pixels per block, 16 bits, 24 per scanline) with
	// 7 pixels per block
	params := binary.LittleEndian.AppendUint32(nil, 169)
	params = binary.LittleEndian.AppendUint32(params, 8)
	params = binary.LittleEndian.AppendUint32(params, 16)
	at = bytes.Index(b, params)
	if at < 0 {
		t.Fatal("cd_values not found")
	}
	odd := bytes.Clone(b)
	odd[at+4] = 7
	if err := os.WriteFile(name, odd, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	o, _ = g.Get("nn8_i2")
	if _, err := o.Dataset(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "filter 4 (szip) with 7 pixels per block") {
		t.Errorf("7 pixels per block: %v", err)
	}
}

// FuzzSzip decodes arbitrary bytes as an szip chunk with arbitrary parameters into a chunk
// of arbitrary size: no panic, never more than the chunk. Seeded with chunks libaec wrote
// (testdata/szip) and their parameters.
func FuzzSzip(f *testing.F) {
	chunks := szipChunks(f, "testdata/szip/options.h5", "const_u2_nn16", "steps_u1_ec16", "wave3_u2_nn8", "bursts_u2_ec32", "short_f4_nn16", "signed_i1_nn8")
	chunks = append(chunks, szipChunks(f, "testdata/szip/dtypes.h5", "f8_be_nn", "i2_be_ec")...)
	seen := map[[4]uint32]bool{}
	for _, c := range chunks {
		p := [4]uint32(c.params)
		if seen[p] || len(c.src) > 4096 {
			continue
		}
		seen[p] = true
		f.Add(c.src, uint16(c.size), uint8(p[0]), uint8(p[1]), uint8(p[2]), uint16(p[3]))
	}
	s := new(scratch)
	f.Fuzz(func(t *testing.T, src []byte, size uint16, mask, block, bpp uint8, line uint16) {
		dst := make([]byte, size)
		params := []uint32{uint32(mask), uint32(block), uint32(bpp), uint32(line)}
		if k, err := s.szipDecode(dst, src, params); k > len(dst) || k < 0 || (err == nil && k != int(binary.LittleEndian.Uint32(src))) {
			t.Fatalf("%d bytes into %d (%v)", k, len(dst), err)
		}
	})
}

// BenchmarkSzipDecode decodes every szip chunk of testdata/szip's options.h5 and dtypes.h5
// (libaec's streams: 8- and 16-bit samples, byte planes of 32- and 64-bit pixels, NN and EC,
// padded scanlines) once per op; bytes are the decoded ones.
func BenchmarkSzipDecode(b *testing.B) {
	lines, err := os.ReadFile("testdata/szip/expected.txt")
	if err != nil {
		b.Fatal(err)
	}
	paths := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if f := strings.Fields(l); f[0] == "options.h5" || f[0] == "dtypes.h5" {
			paths[f[0]] = append(paths[f[0]], f[1])
		}
	}
	var chunks []szipChunk
	for name, p := range paths {
		chunks = append(chunks, szipChunks(b, "testdata/szip/"+name, p...)...)
	}
	total := 0
	for _, c := range chunks {
		total += c.size
	}
	dst := make([]byte, 1<<20)
	s := new(scratch)
	b.SetBytes(int64(total))
	b.ResetTimer()
	for range b.N {
		for _, c := range chunks {
			if _, err := s.szipDecode(dst[:c.size], c.src, c.params); err != nil {
				b.Fatal(err)
			}
		}
	}
}
