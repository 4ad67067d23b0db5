package mds

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mlfeed/mlfeed"
)

// readAll returns every sequence of src as a map from stream name to the sequence's samples,
// each a list of values (numbers as float64 or int64/uint64, text and bytes as strings).
func readAll(t testing.TB, src mlfeed.Source) []map[string][][]any {
	t.Helper()
	var out []map[string][][]any
	sc := src.Schema()
	var prev *mlfeed.Chunk
	for i := range src.Chunks() {
		c, err := src.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if err := c.Validate(&sc); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if c.Sequences != src.Chunks()[i].Sequences {
			t.Fatalf("chunk %d: %d sequences, table says %d", i, c.Sequences, src.Chunks()[i].Sequences)
		}
		lens, err := src.SequenceLengths(i)
		if err != nil || !reflect.DeepEqual(lens, mlfeed.LengthsOf(c)) {
			t.Fatalf("chunk %d: sequence lengths %v, decoded %v (%v)", i, lens, mlfeed.LengthsOf(c), err)
		}
		for q := 0; q < c.Sequences; q++ {
			m := map[string][][]any{}
			for s, st := range sc.Streams {
				d := &c.Streams[s]
				var smp [][]any
				for k := d.SeqStart[q]; k < d.SeqStart[q+1]; k++ {
					from, to := d.SampleRange(&sc.Streams[s], k)
					var vals []any
					for x := from; x < to; x++ {
						vals = append(vals, value(d.Values, x))
					}
					smp = append(smp, vals)
				}
				m[st.Name] = smp
			}
			out = append(out, m)
		}
		prev = nil // the strings point into the shard; the values were copied above
	}
	return out
}

func value(b mlfeed.Buffer, i int) any {
	switch {
	case b.Type.IsVarLen():
		return b.Strings[i]
	case b.Type == mlfeed.Uint64:
		return b.Uint64s()[i]
	case b.Type.IsInteger():
		return b.Int64At(i)
	}
	return b.Float64At(i)
}

type expected struct {
	Columns map[string]string  `json:"columns"`
	Samples []map[string]any   `json:"samples"`
	Raw     []map[string][]any `json:"-"`
}

func loadExpected(t *testing.T, name string) *expected {
	b, err := os.ReadFile(filepath.Join("testdata", name+".expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&e); err != nil {
		t.Fatal(err)
	}
	return &e
}

// flat returns the scalar values an expected value holds (an ndarray's values, a list's
// elements), as the reader gives them: numbers, or base64-decoded bytes.
func want(v any) []any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return []any{i}
		}
		u, _ := strconv.ParseUint(string(x), 10, 64)
		return []any{u}
	case map[string]any:
		if f, ok := x["float"]; ok {
			v, _ := strconv.ParseFloat(f.(string), 64)
			return []any{v}
		}
		if b, ok := x["b64"]; ok {
			raw, _ := base64.StdEncoding.DecodeString(b.(string))
			return []any{string(raw)}
		}
		if vals, ok := x["values"]; ok {
			var out []any
			for _, e := range vals.([]any) {
				out = append(out, want(e)...)
			}
			return out
		}
	case string:
		return []any{x}
	}
	return nil
}

func same(got, want any) bool {
	switch w := want.(type) {
	case int64:
		switch g := got.(type) {
		case int64:
			return g == w
		case uint64:
			return w >= 0 && g == uint64(w)
		case float64:
			return g == float64(w)
		}
	case uint64:
		g, ok := got.(uint64)
		return ok && g == w
	case float64:
		g, ok := got.(float64)
		if !ok {
			if i, ok := got.(int64); ok {
				return float64(i) == w
			}
		}
		return ok && (g == w || (math.IsNaN(g) && math.IsNaN(w)) || float64(float32(w)) == g)
	case string:
		return got == w
	}
	return false
}

// TestScalars reads the data set MDSWriter wrote of every fixed-size number, text and bytes
// encoding, in 7 shards, and compares each value with what the writer was given.
func TestScalars(t *testing.T) {
	rd, err := Open(filepath.Join("testdata", "scalars"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	exp := loadExpected(t, "scalars")
	got := readAll(t, rd)
	if len(got) != len(exp.Samples) || len(rd.Chunks()) != 7 {
		t.Fatalf("%d samples in %d chunks, want %d in 7", len(got), len(rd.Chunks()), len(exp.Samples))
	}
	for k, s := range exp.Samples {
		for col, v := range s {
			g := got[k][col]
			if len(g) != 1 || len(g[0]) != 1 {
				t.Fatalf("sample %d column %s: %v", k, col, g)
			}
			if col == "j" { // json: the text, which holds the object
				var a, b any
				_ = json.Unmarshal([]byte(g[0][0].(string)), &a)
				bb, _ := json.Marshal(v)
				_ = json.Unmarshal(bb, &b)
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("sample %d json: %v, want %v", k, a, b)
				}
				continue
			}
			w := want(v)
			if len(w) != 1 || !same(g[0][0], w[0]) {
				t.Errorf("sample %d column %s (%s): %#v, want %#v", k, col, exp.Columns[col], g[0][0], w)
			}
		}
	}
	wantTypes := map[string]mlfeed.ElemType{"f16": mlfeed.Float32, "int": mlfeed.Int64, "si": mlfeed.Int64, "sf": mlfeed.Float64, "sd": mlfeed.String, "j": mlfeed.String, "b": mlfeed.Bytes, "u64": mlfeed.Uint64}
	for _, st := range rd.Schema().Streams {
		if w, ok := wantTypes[st.Name]; ok && st.Type != w {
			t.Errorf("stream %s is %s, want %s", st.Name, st.Type, w)
		}
	}
}

// TestArrays reads MDSWriter's zstd shards of ndarrays (fixed, per-sample shape, per-sample
// dtype, float16), images and lists of them.
func TestArrays(t *testing.T) {
	rd, err := Open(filepath.Join("testdata", "arrays", IndexName), &ReaderOptions{ChunkSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	exp := loadExpected(t, "arrays")
	got := readAll(t, rd)
	if len(got) != len(exp.Samples) {
		t.Fatalf("%d samples, want %d", len(got), len(exp.Samples))
	}
	sc := rd.Schema()
	byName := map[string]mlfeed.Stream{}
	for _, st := range sc.Streams {
		byName[st.Name] = st
	}
	if st := byName["fixed"]; st.Type != mlfeed.Uint8 || !reflect.DeepEqual(st.Shape, []int{4, 3}) {
		t.Errorf("fixed: %v", st)
	}
	if st := byName["dyn"]; st.Type != mlfeed.Float32 || st.Dim != 0 || byName["dyn.shape"].Type != mlfeed.Int64 {
		t.Errorf("dyn: %v, %v", st, byName["dyn.shape"])
	}
	if st := byName["any"]; st.Type != mlfeed.Int16 {
		t.Errorf("any: %v", st)
	}
	for k, s := range exp.Samples {
		for _, col := range []string{"fixed", "dyn", "any", "half"} {
			w := want(s[col])
			g := got[k][col]
			if len(g) != 1 || len(g[0]) != len(w) {
				t.Fatalf("sample %d %s: %v, want %v", k, col, g, w)
			}
			for x := range w {
				if !same(g[0][x], w[x]) {
					t.Errorf("sample %d %s[%d]: %v, want %v", k, col, x, g[0][x], w[x])
				}
			}
			if col == "dyn" || col == "any" {
				shape := s[col].(map[string]any)["shape"].([]any)
				gs := got[k][col+".shape"][0]
				if len(gs) != len(shape) || fmt.Sprint(gs) != fmt.Sprint(shape) {
					t.Errorf("sample %d %s.shape: %v, want %v", k, col, gs, shape)
				}
			}
		}
		for col, magic := range map[string]string{"jpg": "\xff\xd8\xff", "png": "\x89PNG"} {
			if g := got[k][col]; len(g) != 1 || !strings.HasPrefix(g[0][0].(string), magic) {
				t.Errorf("sample %d %s: not the stored image", k, col)
			}
		}
		if g := got[k]["pil"][0][0].(string); len(g) != 12+1+4 || binary.LittleEndian.Uint32([]byte(g)) != 2 || g[12:13] != "L" {
			t.Errorf("sample %d pil: % x", k, g)
		}
		for _, col := range []string{"lj", "lp", "lpil", "ja"} {
			w := s[col].([]any)
			if g := got[k][col]; len(g) != len(w) {
				t.Errorf("sample %d %s: %d elements, want %d", k, col, len(g), len(w))
			}
		}
		for e, w := range s["ja"].([]any) {
			if g := got[k]["ja"][e][0]; g != want(w)[0] {
				t.Errorf("sample %d ja[%d] differs", k, e)
			}
		}
	}
}

// TestPickle: pkl is refused (exit 2), or read as the pickled bytes with PickleAsBytes.
func TestPickle(t *testing.T) {
	dir := filepath.Join("testdata", "pickled")
	if _, err := Open(dir, nil); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "pkl=bytes") {
		t.Fatalf("pkl: %v", err)
	}
	rd, err := Open(dir, &ReaderOptions{PickleAsBytes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := readAll(t, rd)
	if len(got) != 3 || !strings.HasPrefix(got[2]["obj"][0][0].(string), "\x80") || got[2]["x"][0][0] != int64(2) {
		t.Fatalf("%v", got)
	}
}

// copyDir copies an MDS data set to a temporary directory to corrupt it.
func copyDir(t *testing.T, src string) string {
	dir := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readErr(dir string, o *ReaderOptions) error {
	rd, err := Open(dir, o)
	if err != nil {
		return err
	}
	defer rd.Close()
	for i := range rd.Chunks() {
		if _, err := rd.ReadChunk(context.Background(), i); err != nil {
			return err
		}
	}
	return nil
}

// TestBadData: corrupt shards and indexes are errors naming the file and the byte offset.
func TestBadData(t *testing.T) {
	shard0 := "shard.00000.mds"
	cases := []struct {
		name   string
		dir    string
		change func(t *testing.T, dir string)
		opts   *ReaderOptions
		want   error
		text   string
	}{
		{"truncated", "scalars", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, shard0), 100) }, nil, ErrFormat, shard0 + ": byte offset"},
		{"short header", "scalars", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, shard0), 10) }, nil, ErrTruncated, "byte offset 4"},
		{"count", "scalars", func(t *testing.T, dir string) { poke(t, filepath.Join(dir, shard0), 0, 7) }, nil, ErrFormat, "holds 7 samples"},
		{"offset", "scalars", func(t *testing.T, dir string) { poke(t, filepath.Join(dir, shard0), 8, 0xffff) }, nil, ErrFormat, "byte offset 8"},
		{"sizes", "scalars", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, shard0))
			start := binary.LittleEndian.Uint32(b[4:])
			poke(t, filepath.Join(dir, shard0), int(start), 1000)
		}, nil, ErrFormat, "sample 0"},
		{"index", "scalars", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, IndexName), []byte(`{"shards": [}`), 0o644)
		}, nil, ErrFormat, "index.json: byte 13"},
		{"escape", "scalars", func(t *testing.T, dir string) {
			replaceIn(t, filepath.Join(dir, IndexName), `"shard.00000.mds"`, `"../x.mds"`)
		}, nil, ErrFormat, "not inside"},
		{"memory", "arrays", func(*testing.T, string) {}, &ReaderOptions{MaxMemory: 100}, mlfeed.ErrTooLarge, "max_memory"},
		{"zstd", "arrays", func(t *testing.T, dir string) { poke(t, filepath.Join(dir, "shard.00000.mds.zstd"), 20, 0xdeadbeef) }, nil, ErrFormat, "shard.00000.mds.zstd"},
		{"hash", "scalars", func(t *testing.T, dir string) { poke(t, filepath.Join(dir, "shard.00002.mds"), 200, 7) }, &ReaderOptions{VerifyHashes: true}, ErrFormat, "shard.00002.mds: byte offset 0 (file): mds: invalid data: sha1 digest"},
		{"version", "scalars", func(t *testing.T, dir string) {
			replaceIn(t, filepath.Join(dir, IndexName), `"version": 2}`, `"version": 3}`)
		}, nil, ErrUnsupported, "version 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata", c.dir))
			c.change(t, dir)
			err := readErr(dir, c.opts)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got %v, want %v naming %q", err, c.want, c.text)
			}
		})
	}
}

func truncate(t *testing.T, name string, n int64) {
	if err := os.Truncate(name, n); err != nil {
		t.Fatal(err)
	}
}

func poke(t *testing.T, name string, off int, v uint32) {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[off:], v)
	os.WriteFile(name, b, 0o644)
}

func replaceIn(t *testing.T, name, old, new string) {
	b, _ := os.ReadFile(name)
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s: no %q", name, old)
	}
	os.WriteFile(name, bytes.Replace(b, []byte(old), []byte(new), -1), 0o644)
}

// TestConcurrentEviction: goroutines reading chunks of compressed shards at once, with a
// memory budget of about two shards so that shards are evicted and decompressed again, get
// the chunks a sequential read gets.
func TestConcurrentEviction(t *testing.T) {
	dir := filepath.Join("testdata", "arrays")
	seq, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, seq)
	seq.Close()
	rd, err := Open(dir, &ReaderOptions{MaxMemory: 2 * seq.index.Shards[0].RawData.Bytes})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for r := 0; r < 30; r++ {
				i := (g*7 + r*5) % len(rd.Chunks())
				c, err := rd.ReadChunk(context.Background(), i)
				if err != nil {
					errs <- err
					return
				}
				if got := c.Streams[4].Values.Uint8s()[0]; got != uint8(i) { // fixed[0] = sample number
					errs <- fmt.Errorf("chunk %d: fixed[0] = %d", i, got)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, rd); !reflect.DeepEqual(got, want) {
		t.Fatal("the evicting reader reads other values")
	}
}

// TestDecompressSizes: every codec gives exactly the size raw_data states or an error, a zstd
// frame without its size included, and nothing is allocated past that size.
func TestDecompressSizes(t *testing.T) {
	data := bytes.Repeat([]byte("mds shard "), 1000)
	var stream bytes.Buffer
	zw, _ := zstd.NewWriter(&stream)
	zw.Write(data)
	zw.Close()
	for _, name := range []string{"zstd", "gz", "snappy"} {
		c, _ := codecOf(name)
		z, err := c.compress(data)
		if err != nil {
			t.Fatal(err)
		}
		srcs := [][]byte{z}
		if name == "zstd" {
			srcs = append(srcs, stream.Bytes())
		}
		for _, src := range srcs {
			if got, err := c.decompress(src, int64(len(data))); err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s: %v", name, err)
			}
			for _, want := range []int64{int64(len(data)) - 1, int64(len(data)) + 1, 10} {
				if _, err := c.decompress(src, want); err == nil {
					t.Errorf("%s: %d bytes taken as %d", name, len(data), want)
				}
			}
		}
	}
}
