package minibatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/cbf"
	"github.com/mlfeed/mlfeed/format/idx"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/shard"
)

var (
	_ mlfeed.RawSampler = (*idx.Reader)(nil)
	_ mlfeed.RawSampler = (*cbf.Reader)(nil)
)

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

// TestRawSamples packs minibatches straight from IDX files (mapped and gzip, every byte
// order swap: 1, 2, 4 and 8 bytes) and from the same files' decoded chunks: the minibatches
// are the same, for every configuration, and the raw path is the one taken.
func TestRawSamples(t *testing.T) {
	types := []struct {
		code byte
		size int
	}{{0x08, 1}, {0x0B, 2}, {0x0D, 4}, {0x0E, 8}}
	for _, ty := range types {
		for _, gz := range []bool{false, true} {
			name := writeIDX(t, t.TempDir(), ty.code, ty.size, 1000, gz)
			src, err := idx.Open(name, &idx.ReaderOptions{ChunkSize: 35 * ty.size * 90})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			what := fmt.Sprintf("IDX type 0x%02X, gzip %v", ty.code, gz)
			checkRaw(t, what, src, nil)
		}
	}
}

// rawConfigs are the configurations checkRaw reads with.
var rawConfigs = []Config{
	{MinibatchSize: 64, RandomizationSeed: 3, MaxSweeps: 2},
	{MinibatchSize: 50, NoRandomize: true, MaxSweeps: 1},
	{MinibatchSize: 33, RandomizationWindow: 2, MaxSweeps: 2, Threads: 3, Packers: 2},
	{MinibatchSize: 100, Workers: 3, Rank: 1, MaxSweeps: 2},
	{MinibatchSize: 64, KeepDataInMemory: true, MaxSweeps: 3},
	{MinibatchSize: 64, Threads: 1, MaxSweeps: 2},
	{MinibatchSize: 17, Packers: -1, MaxSweeps: 1, FrameMode: true},
}

// checkRaw reads src with every configuration of rawConfigs, raw and hidden: the minibatches
// are the same, and every chunk but those of decoded (chunk indices) is packed raw.
func checkRaw(t *testing.T, what string, src mlfeed.Source, decoded []int) {
	t.Helper()
	frames := true
	for _, c := range src.Chunks() {
		frames = frames && c.Samples == int64(c.Sequences)
	}
	for k, cfg := range rawConfigs {
		if cfg.FrameMode && !frames {
			continue
		}
		o1, v1 := readStreams(t, src, cfg)
		o2, v2 := readStreams(t, hidden{src}, cfg)
		if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("%s, config %d: the minibatches packed from the file differ from the decoded chunks'", what, k)
		}
		if len(o1) == 0 {
			t.Fatalf("%s, config %d: no minibatches", what, k)
		}
	}
	r, err := New(src, rawConfigs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	for c := range src.Chunks() {
		if raw := packedRaw(r, c); raw == slices.Contains(decoded, c) {
			t.Fatalf("%s: chunk %d packed raw: %v", what, c, raw)
		}
	}
}

// packedRaw reports whether r packed chunk c straight from the source's memory.
func packedRaw(r *Reader, c int) bool {
	if r.raw == nil {
		return false
	}
	rc := r.rawChunks[c].Load()
	return rc != nil && rc != notRaw
}

// writeCBF writes n sequences of a dense float32 stream of 5 values and a dense float64
// stream of 3 (and a sparse one when sparse), one sample each but sequence long of two
// samples, in chunks of about 4000 bytes, to a CBF file in dir.
func writeCBF(t *testing.T, dir string, n, long int, sparse bool) string {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "a", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 5},
		{Name: "b", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 3},
	}}
	if sparse {
		schema.Streams = append(schema.Streams, mlfeed.Stream{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10})
	}
	name := filepath.Join(dir, "data.cbf")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cbf.NewWriter(f, schema, &cbf.WriterOptions{ChunkSize: 4000})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(long)))
	for first := 0; first < n; first += 90 {
		k := min(90, n-first)
		c := &mlfeed.Chunk{Sequences: k, Streams: make([]mlfeed.StreamData, len(schema.Streams))}
		for i, st := range schema.Streams {
			d := &c.Streams[i]
			d.SeqStart = make([]int64, k+1)
			for q := range k {
				l := int64(1)
				if first+q == long {
					l = 2
				}
				d.SeqStart[q+1] = d.SeqStart[q] + l
			}
			samples := int(d.SeqStart[k])
			if st.Storage == mlfeed.Sparse {
				d.SampleStart = make([]int64, samples+1)
				for j := range samples {
					d.SampleStart[j+1] = int64(j + 1)
					d.Indices = append(d.Indices, int32(rng.IntN(10)))
				}
				d.Values = mlfeed.NewBuffer(st.Type, samples)
			} else {
				d.Values = mlfeed.NewBuffer(st.Type, samples*st.Dim)
			}
			for j := range d.Values.Len() {
				d.Values.SetFloat64(j, float64(rng.IntN(1<<20))/7)
			}
		}
		if err := w.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestRawSamplesCBF packs minibatches straight from mapped CBF files of two dense streams
// (float32 and float64): as from decoded chunks. A chunk with a sequence of two samples, and
// a file with a sparse stream, are decoded.
func TestRawSamplesCBF(t *testing.T) {
	for _, c := range []struct {
		long   int
		sparse bool
	}{{-1, false}, {200, false}, {-1, true}} {
		name := writeCBF(t, t.TempDir(), 1000, c.long, c.sparse)
		src, err := cbf.Open(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		var decoded []int
		first := 0
		for k, ci := range src.Chunks() {
			if c.sparse || first <= c.long && c.long < first+ci.Sequences {
				decoded = append(decoded, k)
			}
			first += ci.Sequences
		}
		if len(src.Chunks()) < 5 {
			t.Fatalf("%d chunks", len(src.Chunks()))
		}
		checkRaw(t, fmt.Sprintf("CBF, long sequence %d, sparse %v", c.long, c.sparse), src, decoded)
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

// readStreams returns every minibatch's origins and the values of every dense stream.
func readStreams(t *testing.T, src mlfeed.Source, cfg Config) (origins [][]Origin, values [][]byte) {
	t.Helper()
	r, err := New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		b := r.Batch()
		origins = append(origins, append([]Origin(nil), b.Origins...))
		for k, st := range src.Schema().Streams {
			if st.Storage == mlfeed.Dense {
				values = append(values, append([]byte(nil), b.Dense(k).Bytes...))
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return origins, values
}

// TestRawSamplesThroughWrappers packs minibatches straight from the files behind the
// wrappers: images and labels zipped (the labels' one chunk sliced to the images' chunks),
// streams selected and reordered, a data set of two shards, and the real MNIST pair of
// testdata/mnist. The minibatches are those of
// the decoded chunks, and every chunk is packed raw.
func TestRawSamplesThroughWrappers(t *testing.T) {
	dir := t.TempDir()
	images, err := idx.Open(writeIDX(t, dir, 0x0D, 4, 1000, false), &idx.ReaderOptions{ChunkSize: 35 * 4 * 90})
	if err != nil {
		t.Fatal(err)
	}
	labelBytes := []byte{0, 0, 0x08, 1, 0, 0, 1000 >> 8, 1000 & 0xff}
	for i := range 1000 {
		labelBytes = append(labelBytes, byte(i*7))
	}
	labelName := filepath.Join(dir, "labels.idx")
	if err := os.WriteFile(labelName, labelBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	labels, err := idx.Open(labelName, nil)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := mlfeed.Zip(images, labels)
	if err != nil {
		t.Fatal(err)
	}
	defer zipped.Close()
	if len(labels.Chunks()) != 1 || len(zipped.Chunks()) < 10 {
		t.Fatalf("want one chunk of labels and many of images, got %d and %d", len(labels.Chunks()), len(zipped.Chunks()))
	}
	selected, err := mlfeed.Select(zipped, "labels", "features")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for k := range 2 {
		d := filepath.Join(dir, fmt.Sprint("shard", k))
		os.Mkdir(d, 0o755)
		paths = append(paths, writeIDX(t, d, 0x0B, 2, 300+k*100, k == 1))
	}
	sharded, err := shard.NewSource(paths, nil, func(name string) (mlfeed.Source, error) {
		return idx.Open(name, &idx.ReaderOptions{ChunkSize: 35 * 2 * 64})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	// The real MNIST test set's first 2000 images (gzip: the payload held in memory) and labels
	// (a mapped file), as the README pairs them.
	realImages, err := idx.Open(testutil.Local(t, "mnist", "t10k-images-idx3-ubyte.gz"), &idx.ReaderOptions{ChunkSize: 784 * 300})
	if err != nil {
		t.Fatal(err)
	}
	realLabels, err := idx.Open(testutil.Local(t, "mnist", "t10k-labels-idx1-ubyte"), nil)
	if err != nil {
		t.Fatal(err)
	}
	mnist, err := mlfeed.Zip(realImages, realLabels)
	if err != nil {
		t.Fatal(err)
	}
	defer mnist.Close()
	for _, c := range []struct {
		what string
		src  mlfeed.Source
	}{{"zip", zipped}, {"select", selected}, {"shards", sharded}, {"MNIST", mnist}} {
		for k, cfg := range rawConfigs {
			o1, v1 := readStreams(t, c.src, cfg)
			o2, v2 := readStreams(t, hidden{c.src}, cfg)
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) || len(o1) == 0 {
				t.Fatalf("%s, config %d: the minibatches packed from the files differ from the decoded chunks'", c.what, k)
			}
		}
		r, err := New(c.src, rawConfigs[0])
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
		}
		if len(r.rawChunks) != len(c.src.Chunks()) {
			t.Fatalf("%s: the source offers no raw samples", c.what)
		}
		for i := range c.src.Chunks() {
			if !packedRaw(r, i) {
				t.Fatalf("%s: chunk %d was decoded, not packed raw", c.what, i)
			}
		}
		r.Close()
	}
}

// TestAppendInOrder checks that appending in pieces appends what append does, for lengths
// around the piece size.
func TestAppendInOrder(t *testing.T) {
	src := make([]byte, 5*copyPiece+7)
	for i := range src {
		src[i] = byte(i*31 + i>>8)
	}
	for _, n := range []int{0, 1, copyPiece - 1, copyPiece, copyPiece + 1, 3136, 2 * copyPiece, len(src)} {
		for _, prefix := range [][]byte{nil, {9, 8, 7}} {
			want := append(append([]byte(nil), prefix...), src[:n]...)
			got := appendInOrder(append([]byte(nil), prefix...), src[:n])
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes after %d: got %d bytes, not what append gives", n, len(prefix), len(got))
			}
		}
	}
}

// TestUnitChunksPacked packs decoded chunks whose streams all hold one fixed-size sample per
// sequence (packRaw over the chunks' own memory) with every configuration of rawConfigs: each
// minibatch holds, per sequence, the values and the id of the sequence its origin names.
func TestUnitChunksPacked(t *testing.T) {
	for _, ids := range []bool{false, true} {
		src := uniform(700, 1, 90)
		src.schema.Streams[1] = mlfeed.Stream{Name: "y", Storage: mlfeed.Dense, Type: mlfeed.Int32, Dim: 1}
		g := 0
		for _, c := range src.chunks {
			y := mlfeed.NewBuffer(mlfeed.Int32, c.Sequences)
			for q := range c.Sequences {
				y.Int32s()[q] = int32(3*(g+q) + 1)
			}
			c.Streams[1] = mlfeed.StreamData{SeqStart: c.Streams[0].SeqStart, Values: y}
			g += c.Sequences
		}
		if ids {
			all := make([]int, 700)
			for i := range all {
				all[i] = 1000 + i
			}
			withIDs(src, "", all...)
		}
		for k, cfg := range rawConfigs {
			r, err := New(src, cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for r.Next() {
				b := r.Batch()
				x, y := b.Dense(0).Float32s(), b.Dense(1).Int32s()
				for q := range b.Origins {
					gq := src.global(b, q)
					if x[2*q] != float32(gq) || x[2*q+1] != 0 || y[q] != int32(3*gq+1) {
						t.Fatalf("ids %v, config %d: sequence %d (%d) packed as %v, %v", ids, k, q, gq, x[2*q:2*q+2], y[q])
					}
					if ids && b.Data.IDs[q] != strconv.Itoa(1000+gq) || !ids && b.Data.IDs != nil {
						t.Fatalf("ids %v, config %d: sequence %d (%d) has the ids %v", ids, k, q, gq, b.Data.IDs)
					}
				}
				n += len(b.Origins)
			}
			if err := r.Err(); err != nil || n == 0 {
				t.Fatalf("ids %v, config %d: %d sequences, %v", ids, k, n, err)
			}
			for i := range src.chunks {
				if s := r.slots[i]; s != nil && s.loaded.Load() && s.views == nil {
					t.Fatalf("ids %v, config %d: chunk %d has no views", ids, k, i)
				}
			}
			r.Close()
		}
	}
}
