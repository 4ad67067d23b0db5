package idx

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// benchRead opens name and reads every chunk, touching one byte per 4 KiB page so that mapped
// data is really read.
func benchRead(b *testing.B, name string, opts *Options) {
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var sink byte
	for b.Loop() {
		r, err := Open(name, opts)
		if err != nil {
			b.Fatal(err)
		}
		for i := range r.Chunks() {
			c, err := r.ReadChunk(ctx, i)
			if err != nil {
				b.Fatal(err)
			}
			v := c.Streams[0].Values.Bytes
			for k := 0; k < len(v); k += 4096 {
				sink += v[k]
			}
		}
		r.Close()
	}
	_ = sink
}

func BenchmarkReadMNISTMmap(b *testing.B) {
	benchRead(b, testutil.Testdata(b, "mnist", "t10k-images-idx3-ubyte"), nil)
}

func BenchmarkReadMNISTReadAt(b *testing.B) {
	benchRead(b, testutil.Testdata(b, "mnist", "t10k-images-idx3-ubyte"), &ReaderOptions{NoMmap: true})
}

func BenchmarkReadMNISTGzip(b *testing.B) {
	benchRead(b, testutil.Testdata(b, "mnist", "t10k-images-idx3-ubyte.gz"), nil)
}

// BenchmarkReadFloat32 measures the big-endian to little-endian path.
func BenchmarkReadFloat32(b *testing.B) {
	file, _ := randomFile(b, mlfeed.Float32, []int{10000, 784}, false)
	name := filepath.Join(b.TempDir(), "f32.idx")
	if err := os.WriteFile(name, file, 0o644); err != nil {
		b.Fatal(err)
	}
	benchRead(b, name, nil)
}

func BenchmarkWriteFloat32(b *testing.B) {
	h := Header{Type: mlfeed.Float32, Dims: []int{10000, 784}}
	values := mlfeed.NewBuffer(mlfeed.Float32, 10000*784)
	b.SetBytes(int64(len(values.Bytes)))
	for b.Loop() {
		w, err := NewWriter(io.Discard, h, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(values); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
