package minibatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/idx"
)

var _ RawSampler = (*idx.Reader)(nil)

// writeIDX writes n records of 5x7 elements of an IDX type code (size bytes each, random
// bytes) to a file in dir, gzip-compressed when gz, and returns its name.
func writeIDX(t *testing.T, dir string, code byte, size, n int, gz bool) string {
	var b bytes.Buffer
	b.Write([]byte{0, 0, code, 3})
	for _, d := range []uint32{uint32(n), 5, 7} {
		binary.Write(&b, binary.BigEndian, d)
	}
	data := make([]byte, n*35*size)
	rng := rand.New(rand.NewPCG(uint64(code), uint64(n)))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if code >= 0x0D {
		// Floats without NaNs, whose bits a copy might not keep: clear each element's top
		// exponent bit (the first byte, big-endian).
		for i := 0; i < len(data); i += size {
			data[i] &^= 0x40
		}
	}
	b.Write(data)
	out := b.Bytes()
	name := filepath.Join(dir, "data.idx")
	if gz {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(out)
		w.Close()
		out, name = z.Bytes(), name+".gz"
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// hidden hides a source's RawSamples: the engine reads its chunks.
type hidden struct{ mlfeed.Source }

// readAll returns every minibatch's origins and values.
func readAll(t *testing.T, src mlfeed.Source, cfg Config) (origins [][]Origin, values [][]byte) {
	t.Helper()
	r, err := New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		b := r.Batch()
		origins = append(origins, append([]Origin(nil), b.Origins...))
		values = append(values, append([]byte(nil), b.Dense(0).Bytes...))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return origins, values
}

// TestRawSamples packs minibatches straight from IDX files (mapped and gzip, every byte
// order swap: 1, 2, 4 and 8 bytes) and from the same files' decoded chunks: the minibatches
// are the same, for every configuration, and the raw path is the one taken.
func TestRawSamples(t *testing.T) {
	types := []struct {
		code byte
		size int
	}{{0x08, 1}, {0x0B, 2}, {0x0D, 4}, {0x0E, 8}}
	configs := []Config{
		{MinibatchSize: 64, RandomizationSeed: 3, MaxSweeps: 2},
		{MinibatchSize: 50, NoRandomize: true, MaxSweeps: 1},
		{MinibatchSize: 33, RandomizationWindow: 2, MaxSweeps: 2, Threads: 3, Packers: 2},
		{MinibatchSize: 100, Workers: 3, Rank: 1, MaxSweeps: 2},
		{MinibatchSize: 64, KeepDataInMemory: true, MaxSweeps: 3},
		{MinibatchSize: 64, Threads: 1, MaxSweeps: 2},
		{MinibatchSize: 17, Packers: -1, MaxSweeps: 1, FrameMode: true},
	}
	for _, ty := range types {
		for _, gz := range []bool{false, true} {
			name := writeIDX(t, t.TempDir(), ty.code, ty.size, 1000, gz)
			src, err := idx.Open(name, &idx.ReaderOptions{ChunkSize: 35 * ty.size * 90})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for k, cfg := range configs {
				o1, v1 := readAll(t, src, cfg)
				o2, v2 := readAll(t, hidden{src}, cfg)
				if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) {
					t.Fatalf("type 0x%02X, gzip %v, config %d: the minibatches packed from the file differ from the decoded chunks'", ty.code, gz, k)
				}
				if len(o1) == 0 {
					t.Fatalf("config %d: no minibatches", k)
				}
			}
			r, err := New(src, configs[0])
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
			}
			for c := range src.Chunks() {
				if r.rawChunks[c].Load() == nil {
					t.Fatalf("type 0x%02X, gzip %v: chunk %d was decoded, not packed from the file", ty.code, gz, c)
				}
			}
			r.Close()
		}
	}
}

// TestRawSamplesTruncated shrinks a mapped file while minibatches are packed from it: the
// reader stops with an error naming the file, not a crash.
func TestRawSamplesTruncated(t *testing.T) {
	for _, threads := range []int{1, 2} {
		name := writeIDX(t, t.TempDir(), 0x0D, 4, 4000, false)
		src, err := idx.Open(name, &idx.ReaderOptions{ChunkSize: 35 * 4 * 100})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		r, err := New(src, Config{MinibatchSize: 64, NoRandomize: threads == 1, MaxSweeps: 3, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Next() {
			t.Fatal(r.Err())
		}
		if err := os.Truncate(name, 20000); err != nil {
			t.Fatal(err)
		}
		for r.Next() {
		}
		err = r.Err()
		r.Close()
		var pe *mlfeed.PosError
		if !errors.Is(err, mlfeed.ErrTruncated) || !errors.As(err, &pe) || pe.File != name {
			t.Fatalf("threads %d: error %v, want a truncation of %s", threads, err, name)
		}
	}
}
