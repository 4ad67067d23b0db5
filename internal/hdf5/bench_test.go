package hdf5

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

// benchDataset writes 4 million float64 values with o and opens the dataset.
func benchDataset(b *testing.B, o DatasetOptions) *Dataset {
	name := filepath.Join(b.TempDir(), "b.h5")
	w, err := Create(name)
	if err != nil {
		b.Fatal(err)
	}
	data := testData(mlfeed.Float64, 1<<22)
	if err := w.WriteDataset("/", "x", mlfeed.Float64, []uint64{1 << 22}, data, o); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f, err := Open(name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	o2, err := f.Get("x")
	if err != nil {
		b.Fatal(err)
	}
	d, err := o2.Dataset()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func benchReadRows(b *testing.B, o DatasetOptions) {
	d := benchDataset(b, o)
	buf := make([]byte, d.Len()*8)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadContiguous(b *testing.B) { benchReadRows(b, DatasetOptions{}) }

func BenchmarkReadChunked(b *testing.B) { benchReadRows(b, DatasetOptions{ChunkRows: 1 << 17}) }

func BenchmarkReadDeflate(b *testing.B) {
	benchReadRows(b, DatasetOptions{ChunkRows: 1 << 17, Level: 1})
}

func BenchmarkReadDeflateShuffle(b *testing.B) {
	benchReadRows(b, DatasetOptions{ChunkRows: 1 << 17, Level: 1, Shuffle: true})
}

func BenchmarkWriteDeflate(b *testing.B) {
	data := testData(mlfeed.Float64, 1<<22)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		w, err := Create(filepath.Join(b.TempDir(), "w.h5"))
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteDataset("/", "x", mlfeed.Float64, []uint64{1 << 22}, data, DatasetOptions{ChunkRows: 1 << 17, Level: 1}); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile reads every dataset of the HDF5 file MLFEED_BENCH_H5 whole, on one
// goroutine (bench/hdf5.sh writes the files with h5py and times h5py reading them too).
func BenchmarkReadFile(b *testing.B) {
	name := os.Getenv("MLFEED_BENCH_H5")
	if name == "" {
		b.Skip("MLFEED_BENCH_H5 names no file (bench/hdf5.sh sets it)")
	}
	f, err := Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var ds []*Dataset
	var size int64
	err = f.Walk(func(e WalkEntry) error {
		if e.Object == nil || e.Kind != HardLink || e.Seen || !e.Object.IsDataset() {
			return nil
		}
		d, err := e.Object.Dataset()
		if err != nil {
			return err
		}
		ds = append(ds, d)
		size += int64(d.Len()) * int64(d.Type.Size)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	bufs := make([][]byte, len(ds))
	for i, d := range ds {
		bufs[i] = make([]byte, d.Len()*uint64(d.Type.Size))
	}
	b.SetBytes(size)
	cpu := cputime.Seconds()
	b.ResetTimer()
	for range b.N {
		for i, d := range ds {
			if err := d.ReadRows(bufs[i], 0, d.Rows()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkUnbitshuffle undoes bitshuffle (no compression) on 4 MiB of float32 in blocks of
// the default 2048 elements.
func BenchmarkUnbitshuffle(b *testing.B) {
	src := testData(mlfeed.Float32, 1<<20)
	dst := make([]byte, len(src))
	params := []uint32{0, 4, 4, 0, bshufNone}
	b.SetBytes(int64(len(src)))
	s := new(scratch)
	for range b.N {
		if _, err := s.bitshuffleDecode(dst, src, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBloscDecode decodes Blosc frames of 4 MiB of float64 (testData's values) in c-blosc's
// default 256 KiB blocks, with lz4, zstd and zlib after byte shuffle and lz4 after bit shuffle,
// reporting decoded bytes per second and CPU seconds per frame.
func BenchmarkBloscDecode(b *testing.B) {
	data := testData(mlfeed.Float64, 1<<19)
	for _, c := range []struct {
		codec int
		flags byte
	}{{bloscLZ4, bloscShuffle}, {bloscLZ4, bloscBitshuffle}, {bloscZstd, bloscShuffle | bloscNoSplit}, {bloscZlib, bloscShuffle}} {
		frame := bloscEncode(b, data, c.codec, c.flags, 8, 256<<10, false)
		name := fmt.Sprintf("%s_flags%#x", bloscCodecName[c.codec], c.flags)
		b.Run(name, func(b *testing.B) {
			s := new(scratch)
			dst := make([]byte, len(data))
			b.SetBytes(int64(len(data)))
			cpu := cputime.Seconds()
			b.ResetTimer()
			for range b.N {
				if _, err := s.bloscDecode(dst, frame); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(data))/float64(len(frame)), "ratio")
		})
	}
}

// BenchmarkBloscFile reads each dataset of testdata/blosc/big.h5 whole, on one goroutine:
// frames c-blosc 1.21.3 wrote through PyTables (blosclz, split or not; zstd; lz4 after bit
// shuffle), in chunks of 300 to 512 KB.
func BenchmarkBloscFile(b *testing.B) {
	f, err := Open("testdata/blosc/big.h5")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"u1_blosclz", "i2_blosclz", "f8_zstd", "f8_lz4_bitshuffle"} {
		o, err := f.Get(name)
		if err != nil {
			b.Fatal(err)
		}
		d, err := o.Dataset()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) { benchReadWhole(b, d) })
	}
}

// benchReadWhole reads dataset d whole b.N times on one goroutine and reports its bytes and
// CPU time.
func benchReadWhole(b *testing.B, d *Dataset) {
	buf := make([]byte, d.Len()*uint64(d.Type.Size))
	b.SetBytes(int64(len(buf)))
	cpu := cputime.Seconds()
	b.ResetTimer()
	for range b.N {
		if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkLZOFile reads testdata/lzo/big.h5's int32 x 400000 whole, on one goroutine:
// LZO1X-1 streams liblzo2 2.10 wrote through PyTables, after byte shuffle, in chunks of
// 256 KiB.
func BenchmarkLZOFile(b *testing.B) {
	f, err := Open("testdata/lzo/big.h5")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	o, err := f.Get("i4_shuffle")
	if err != nil {
		b.Fatal(err)
	}
	d, err := o.Dataset()
	if err != nil {
		b.Fatal(err)
	}
	benchReadWhole(b, d)
}

// BenchmarkNbitDecode unpacks 1 Mi elements: int32 of 12 bits at bit 4 (little-endian),
// int16 of 9 bits at bit 3 (big-endian), and the general path of a compound of a 12-bit
// int32 and a 20-bit big-endian int32 (8-byte records); bytes per second of output and CPU seconds per chunk.
func BenchmarkNbitDecode(b *testing.B) {
	const n = 1 << 20
	for _, c := range []struct {
		name   string
		params []uint32
		bits   []uint
	}{
		{"i4_p12", nbitAtomicParams(n, 4, 0, 12, 4), []uint{12}},
		{"i2be_p9", nbitAtomicParams(n, 2, 1, 9, 3), []uint{9}},
		{"cmpd", []uint32{18, 0, n, nbitCompound, 8, 2, 0, nbitAtomic, 4, 0, 12, 4, 4, nbitAtomic, 4, 1, 20, 0}, []uint{12, 20}},
	} {
		p, err := parseNbit(c.params)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var w bitWriter
		for range n {
			for _, k := range c.bits {
				w.put(rng.Uint64(), k)
			}
		}
		dst := make([]byte, n*p.size)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(dst)))
			cpu := cputime.Seconds()
			for range b.N {
				if _, err := nbitDecode(dst, w.b, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkScaleOffsetDecode decodes 1 Mi elements: int32 of 13 minimum bits, float32
// D-scaled of 17 bits and float64 of 30 bits, each with a fill value defined; bytes per second
// of output and CPU seconds per chunk.
func BenchmarkScaleOffsetDecode(b *testing.B) {
	const n = 1 << 20
	for _, c := range []struct {
		name    string
		params  []uint32
		minbits uint
	}{
		{"i4_13bits", []uint32{2, 0, n, 0, 4, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 13},
		{"f4_d3_17bits", []uint32{0, 3, n, 1, 4, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 17},
		{"f8_d4_30bits", []uint32{0, 4, n, 1, 8, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 30},
	} {
		p, err := parseScaleOffset(c.params)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		w := bitWriter{b: binary.LittleEndian.AppendUint32(nil, uint32(c.minbits))}
		w.b = append(w.b, 8)
		w.b = binary.LittleEndian.AppendUint64(w.b, uint64(math.Float32bits(-12.5)))
		w.b = append(w.b, make([]byte, 8)...)
		w.n = 8
		for range n {
			w.put(rng.Uint64(), c.minbits)
		}
		dst := make([]byte, n*p.size)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(dst)))
			cpu := cputime.Seconds()
			for range b.N {
				if _, err := soDecode(dst, w.b, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}
