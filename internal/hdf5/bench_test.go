package hdf5

import (
	"fmt"
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
