package arrow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// testSchema has a stream of every layout the mapping knows, with metadata.
func testSchema() mlfeed.Schema {
	slot := mlfeed.Annotation{Name: "SlotNames",
		Desc: mlfeed.Stream{Type: mlfeed.String, Dim: 2},
		Data: mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"a", "b"}}}}
	return mlfeed.Schema{HasIDs: true, Streams: []mlfeed.Stream{
		{Name: "label", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 1, DefinesMBSize: true},
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 6, Shape: []int{2, 3}, Alias: "img"},
		{Name: "vec", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 2, Metadata: []mlfeed.Annotation{slot}},
		{Name: "var", Storage: mlfeed.Dense, Type: mlfeed.Int16},
		{Name: "bow", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 100},
		{Name: "flag", Storage: mlfeed.Dense, Type: mlfeed.Bool, Dim: 1},
		{Name: "text", Storage: mlfeed.Dense, Type: mlfeed.String, Dim: 1},
		{Name: "key", Storage: mlfeed.Dense, Type: mlfeed.Uint32, Dim: 1, KeyCount: 10},
		{Name: "when", Storage: mlfeed.Dense, Type: mlfeed.DateTime, Dim: 1},
		{Name: "z", Storage: mlfeed.Dense, Type: mlfeed.Complex64, Dim: 1},
	}}
}

func f32(v ...float32) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float32, len(v))
	copy(b.Float32s(), v)
	return b
}

func f64(v ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float64, len(v))
	copy(b.Float64s(), v)
	return b
}

func raw(t mlfeed.ElemType, n int, fill func(p []byte)) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, n)
	fill(b.Bytes)
	return b
}

// testChunk returns n sequences of one sample each, with values derived from seed.
func testChunk(n, seed int) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, 10)}
	one := make([]int64, n+1)
	for i := range one {
		one[i] = int64(i)
	}
	for q := 0; q < n; q++ {
		c.IDs = append(c.IDs, "s"+string(rune('a'+(q+seed)%26)))
	}
	c.Streams[0] = mlfeed.StreamData{SeqStart: one, Values: raw(mlfeed.Uint8, n, func(p []byte) {
		for i := range p {
			p[i] = byte(i + seed)
		}
	})}
	img := make([]float32, 6*n)
	for i := range img {
		img[i] = float32(i*seed) / 7
	}
	c.Streams[1] = mlfeed.StreamData{SeqStart: one, Values: f32(img...)}
	vec := make([]float64, 2*n)
	for i := range vec {
		vec[i] = math.Sqrt(float64(i + seed))
	}
	c.Streams[2] = mlfeed.StreamData{SeqStart: one, Values: f64(vec...)}
	var ss []int64
	var vals []byte
	ss = append(ss, 0)
	for q := 0; q < n; q++ {
		for k := 0; k < q%3; k++ {
			vals = binary.LittleEndian.AppendUint16(vals, uint16(int16(-q*k)))
		}
		ss = append(ss, int64(len(vals)/2))
	}
	c.Streams[3] = mlfeed.StreamData{SeqStart: one, SampleStart: ss, Values: mlfeed.Buffer{Type: mlfeed.Int16, Bytes: vals}}
	var sp []int64
	var ix []int32
	var sv []float32
	sp = append(sp, 0)
	for q := 0; q < n; q++ {
		for k := 0; k < (q+seed)%4; k++ {
			ix = append(ix, int32((q*7+k*13)%100))
			sv = append(sv, float32(q)+float32(k)/2)
		}
		sp = append(sp, int64(len(ix)))
	}
	c.Streams[4] = mlfeed.StreamData{SeqStart: one, SampleStart: sp, Indices: ix, Values: f32(sv...)}
	c.Streams[5] = mlfeed.StreamData{SeqStart: one, Values: raw(mlfeed.Bool, n, func(p []byte) {
		for i := range p {
			p[i] = byte((i + seed) % 2)
		}
	})}
	txt := make([]string, n)
	for i := range txt {
		txt[i] = strings.Repeat("é", i%4) + "x"
	}
	c.Streams[6] = mlfeed.StreamData{SeqStart: one, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: txt}}
	c.Streams[7] = mlfeed.StreamData{SeqStart: one, Values: raw(mlfeed.Uint32, n, func(p []byte) {
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(p[4*i:], uint32(i%11))
		}
	})}
	c.Streams[8] = mlfeed.StreamData{SeqStart: one, Values: raw(mlfeed.DateTime, n, func(p []byte) {
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(p[8*i:], uint64(637000000000000000+int64(i)))
		}
	})}
	c.Streams[9] = mlfeed.StreamData{SeqStart: one, Values: raw(mlfeed.Complex64, n, func(p []byte) {
		for i := range p {
			p[i] = byte(i * 3)
		}
	})}
	return c
}

func write(t testing.TB, schema mlfeed.Schema, opts *WriterOptions, chunks ...*mlfeed.Chunk) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if err := w.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	schema := testSchema()
	chunks := []*mlfeed.Chunk{testChunk(5, 1), testChunk(0, 2), testChunk(17, 3)}
	mem, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*WriterOptions{nil, {Stream: true}, {Compression: "zstd"}, {Compression: "lz4", Stream: true}, {Sequences: "list"}} {
		data := write(t, schema, opts, chunks...)
		for _, mapped := range []bool{false, true} {
			var rd *Reader
			if mapped {
				path := filepath.Join(t.TempDir(), "t.arrow")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				rd, err = Open(path, nil)
			} else {
				rd, err = NewReader(bytes.NewReader(data), int64(len(data)), "t.arrow", nil)
			}
			if err != nil {
				t.Fatalf("%+v: %v", opts, err)
			}
			for i, got := range rd.Schema().Streams {
				if !reflect.DeepEqual(got, schema.Streams[i]) {
					t.Errorf("%+v: stream\n got %#v\nwant %#v", opts, got, schema.Streams[i])
				}
			}
			if got := rd.Chunks(); len(got) != 3 || got[0].Sequences != 5 || got[2].Sequences != 17 {
				t.Errorf("%+v: chunks %+v", opts, got)
			}
			if err := mlfeed.Diff(context.Background(), mem, rd); err != nil {
				t.Errorf("%+v mapped=%v: %v", opts, mapped, err)
			}
			c, err := rd.ReadChunk(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.IDs, chunks[2].IDs) {
				t.Errorf("ids %v, want %v", c.IDs, chunks[2].IDs)
			}
			// Reuse decodes the same values into the previous chunk's memory.
			c2, err := rd.ReadChunkReuse(context.Background(), 0, c)
			if err != nil {
				t.Fatal(err)
			}
			one, _ := mlfeed.NewMemorySource(schema, c2)
			want, _ := mlfeed.NewMemorySource(schema, chunks[0])
			if err := mlfeed.Diff(context.Background(), want, one); err != nil {
				t.Errorf("reuse: %v", err)
			}
			rd.Close()
		}
	}
}

func TestSequences(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 2},
		{Name: "y", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5},
		{Name: "l", Type: mlfeed.Int32, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 2, 2, 5}, Values: f32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		{SeqStart: []int64{0, 1, 3, 3}, SampleStart: []int64{0, 2, 2, 3}, Indices: []int32{0, 4, 2}, Values: f32(1, 2, 3)},
		{SeqStart: []int64{0, 1, 2, 3}, Values: raw(mlfeed.Int32, 3, func(p []byte) { p[0], p[4], p[8] = 7, 8, 9 })},
	}}
	data := write(t, schema, nil, c)
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "seq.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Schema(); !reflect.DeepEqual(got, schema) {
		t.Errorf("schema %+v", got)
	}
	mem, _ := mlfeed.NewMemorySource(schema, c)
	if err := mlfeed.Diff(context.Background(), mem, rd); err != nil {
		t.Error(err)
	}
	lens, err := rd.SequenceLengths(0)
	if err != nil || !reflect.DeepEqual(lens, []int64{2, 2, 3}) {
		t.Errorf("lengths %v %v", lens, err)
	}
	// A later chunk with several samples in a column laid out for one is refused.
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, schema, nil)
	one := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1}, Values: f32(1, 2)},
		{SeqStart: []int64{0, 1}, SampleStart: []int64{0, 0}, Indices: []int32{}, Values: f32()},
		{SeqStart: []int64{0, 1}, Values: raw(mlfeed.Int32, 1, func([]byte) {})},
	}}
	if err := w.WriteChunk(one); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "sequences=list") {
		t.Errorf("got %v", err)
	}
}

func TestUnsupportedStream(t *testing.T) {
	_, err := arrowmap.NewEncoder(mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.ElemType(200), Dim: 1}}}, nil, false)
	if !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("got %v", err)
	}
}
