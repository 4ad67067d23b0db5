package mlfeed

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// testData builds a two-stream chunk: a dense float32 stream of dim 2 and a sparse uint8
// stream of dim 5, with sequence lengths lens.
func testData(lens []int, base float64) (Schema, *Chunk) {
	sc := Schema{Streams: []Stream{
		{Name: "x", Type: Float32, Dim: 2},
		{Name: "y", Storage: Sparse, Type: Uint8, Dim: 5},
	}, HasIDs: true}
	c := &Chunk{Sequences: len(lens)}
	dense := StreamData{SeqStart: []int64{0}, Values: Buffer{Type: Float32}}
	sparse := StreamData{SeqStart: []int64{0}, SampleStart: []int64{0}, Values: Buffer{Type: Uint8}}
	v := base
	for q, n := range lens {
		c.IDs = append(c.IDs, strings.Repeat("i", q+1))
		for s := 0; s < n; s++ {
			b := NewBuffer(Float32, 2)
			b.SetFloat64(0, v)
			b.SetFloat64(1, -v)
			dense.Values.Append(b)
			v++
			// sample s of the sparse stream has s%3 entries
			for k := 0; k < s%3; k++ {
				sparse.Indices = append(sparse.Indices, int32(k*2))
				sparse.Values.Bytes = append(sparse.Values.Bytes, byte(v)+byte(k))
			}
			sparse.SampleStart = append(sparse.SampleStart, int64(len(sparse.Indices)))
		}
		dense.SeqStart = append(dense.SeqStart, dense.SeqStart[q]+int64(n))
		sparse.SeqStart = append(sparse.SeqStart, sparse.SeqStart[q]+int64(n))
	}
	c.Streams = []StreamData{dense, sparse}
	return sc, c
}

func TestChunkSliceConcat(t *testing.T) {
	sc, c := testData([]int{1, 3, 0, 2, 4}, 1)
	if err := c.Validate(&sc); err != nil {
		t.Fatal(err)
	}
	if c.SequenceLength(1) != 3 || c.SequenceLength(2) != 0 {
		t.Fatal("SequenceLength")
	}
	parts := []*Chunk{c.Slice(0, 2), c.Slice(2, 2), c.Slice(2, 5)}
	for i, p := range parts {
		if err := p.Validate(&sc); err != nil {
			t.Fatalf("slice %d: %v", i, err)
		}
	}
	whole := ConcatChunks(parts)
	if err := whole.Validate(&sc); err != nil {
		t.Fatal(err)
	}
	a, _ := NewMemorySource(sc, c)
	b, _ := NewMemorySource(sc, whole)
	if err := Diff(context.Background(), a, b); err != nil {
		t.Fatalf("slice+concat changed the data: %v", err)
	}
	if strings.Join(whole.IDs, ",") != strings.Join(c.IDs, ",") {
		t.Fatal("ids changed")
	}
}

func TestChunkValidateCatchesErrors(t *testing.T) {
	sc, c := testData([]int{2, 2}, 1)
	bad := *c
	bad.Streams = append([]StreamData(nil), c.Streams...)
	bad.Streams[1].Indices = append([]int32(nil), c.Streams[1].Indices...)
	bad.Streams[1].Indices[0] = 5
	if err := bad.Validate(&sc); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("index out of range: %v", err)
	}
	bad.Streams = append([]StreamData(nil), c.Streams...)
	bad.Streams[0].Values = c.Streams[0].Values.Slice(0, 3)
	if err := bad.Validate(&sc); err == nil {
		t.Error("short dense values accepted")
	}
	bad.Streams = append([]StreamData(nil), c.Streams...)
	bad.Streams[0].SeqStart = []int64{0, 3, 2}
	if err := bad.Validate(&sc); err == nil {
		t.Error("decreasing SeqStart accepted")
	}
}

func TestDiffFindsDifferences(t *testing.T) {
	sc, c := testData([]int{1, 2, 3}, 1)
	_, d := testData([]int{1, 2, 3}, 2)
	a, _ := NewMemorySource(sc, c)
	b, _ := NewMemorySource(sc, d)
	err := Diff(context.Background(), a, b)
	if err == nil || !strings.Contains(err.Error(), "sequence 0") {
		t.Fatalf("Diff: %v", err)
	}
	_, e := testData([]int{1, 2}, 1)
	b2, _ := NewMemorySource(sc, e)
	if err := Diff(context.Background(), a, b2); err == nil {
		t.Fatal("shorter source compares equal")
	}
}

func TestZip(t *testing.T) {
	sc, c := testData([]int{1, 1, 1, 1, 1, 1}, 1)
	a, _ := NewMemorySource(Schema{Streams: sc.Streams[:1]}, &Chunk{Sequences: 6, Streams: c.Streams[:1]})
	// b holds the second stream in three chunks of two: the finest chunking wins.
	var parts []*Chunk
	for i := 0; i < 6; i += 2 {
		p := c.Slice(i, i+2)
		parts = append(parts, &Chunk{Sequences: 2, Streams: p.Streams[1:]})
	}
	b, _ := NewMemorySource(Schema{Streams: sc.Streams[1:]}, parts...)
	z, err := Zip(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(z.Chunks()) != 3 || len(z.Schema().Streams) != 2 {
		t.Fatalf("zip has %d chunks, %d streams", len(z.Chunks()), len(z.Schema().Streams))
	}
	whole, _ := NewMemorySource(Schema{Streams: sc.Streams}, &Chunk{Sequences: 6, Streams: c.Streams})
	if err := Diff(context.Background(), whole, z); err != nil {
		t.Fatal(err)
	}
	short, _ := NewMemorySource(Schema{Streams: sc.Streams[1:]}, parts[0])
	if _, err := Zip(a, short); !errors.Is(err, ErrFormat) {
		t.Errorf("mismatched counts: %v", err)
	}
	if _, err := Zip(a, a); err == nil {
		t.Error("duplicate stream names accepted")
	}
	sel, err := Select(z, "y")
	if err != nil || len(sel.Schema().Streams) != 1 || sel.Schema().Streams[0].Name != "y" {
		t.Fatalf("Select: %v", err)
	}
	if _, err := Select(z, "nope"); err == nil {
		t.Error("Select of a missing stream")
	}
}

func TestPosError(t *testing.T) {
	e := LineError("a.ctf", 3, 7, ErrFormat)
	if e.Error() != "a.ctf:3:7: invalid data" || !errors.Is(e, ErrFormat) {
		t.Errorf("%q", e.Error())
	}
	o := OffsetError("a.cbf", 12, "header", ErrTruncated)
	if o.Error() != "a.cbf: byte offset 12 (header): unexpected end of data" || !errors.Is(o, ErrTruncated) {
		t.Errorf("%q", o.Error())
	}
}

func TestSchemaValidate(t *testing.T) {
	bad := []Schema{
		{Streams: []Stream{{Name: "", Type: Float32, Dim: 1}}},
		{Streams: []Stream{{Name: "a", Type: Float32, Dim: 1}, {Name: "a", Type: Float32, Dim: 1}}},
		{Streams: []Stream{{Name: "a", Dim: 1}}},
		{Streams: []Stream{{Name: "a", Type: Float32, Dim: 6, Shape: []int{2, 2}}}},
		{Streams: []Stream{{Name: "a", Type: Float32, Dim: 1, DefinesMBSize: true}, {Name: "b", Type: Float32, Dim: 1, DefinesMBSize: true}}},
	}
	for i, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("schema %d accepted", i)
		}
	}
}

// ReuseStream empties a stream for appending, in the memory it is given, and never hands out
// nil values (an empty chunk's stream is [] as JSON, and a type of no values stays typed).
func TestReuseStream(t *testing.T) {
	for _, c := range []struct {
		t      ElemType
		ragged bool
	}{{Float32, false}, {Bytes, false}, {String, true}, {Int64, true}} {
		d := ReuseStream(StreamData{}, c.t, c.ragged)
		if len(d.SeqStart) != 1 || d.SeqStart[0] != 0 || d.Values.Type != c.t || d.Values.Len() != 0 ||
			(c.t.IsVarLen() && d.Values.Strings == nil) || (!c.t.IsVarLen() && d.Values.Bytes == nil) ||
			(d.SampleStart != nil) != c.ragged || c.ragged && (len(d.SampleStart) != 1 || d.SampleStart[0] != 0) {
			t.Fatalf("%v ragged %v from nothing: %+v", c.t, c.ragged, d)
		}
		// Filled, then reused: the same arrays, emptied.
		d.SeqStart = append(d.SeqStart, 2, 3)
		if c.ragged {
			d.SampleStart = append(d.SampleStart, 4, 5, 6)
		}
		if c.t.IsVarLen() {
			d.Values.Strings = append(d.Values.Strings, "a", "b")
		} else {
			d.Values.Bytes = append(d.Values.Bytes, make([]byte, 16)...)
		}
		e := ReuseStream(d, c.t, c.ragged)
		if len(e.SeqStart) != 1 || &e.SeqStart[:2][1] != &d.SeqStart[1] || e.Values.Len() != 0 {
			t.Errorf("%v: reused as %+v", c.t, e)
		}
		if c.ragged && &e.SampleStart[:2][1] != &d.SampleStart[1] {
			t.Errorf("%v: SampleStart not reused", c.t)
		}
		if c.t.IsVarLen() && &e.Values.Strings[:1][0] != &d.Values.Strings[0] || !c.t.IsVarLen() && &e.Values.Bytes[:1][0] != &d.Values.Bytes[0] {
			t.Errorf("%v: values not reused", c.t)
		}
	}
}
