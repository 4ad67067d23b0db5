package idv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader feeds mutated IDV streams to the reader: every failure must be a positional
// error, every decoded chunk must match the schema, and whatever reads must write and read
// back to the same values.
func FuzzReader(f *testing.F) {
	if d := testutil.SharedDir(); d != "" {
		files, _ := filepath.Glob(filepath.Join(d, "testdata", "idv", "*.idv"))
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add(writeAll(f, allTypes(5, 5), &WriterOptions{Uncompressed: true, MaxRowsPerBlock: 3}))
	f.Add(writeAll(f, allTypes(4, 4), &WriterOptions{MaxRowsPerBlock: 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), &ReaderOptions{FileName: "fuzz.idv"})
		if err != nil {
			var pe *mlfeed.PosError
			if !errors.As(err, &pe) {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		sc := r.Schema()
		for i := range r.Chunks() {
			c, err := r.ReadChunk(context.Background(), i)
			if err != nil {
				var pe *mlfeed.PosError
				if !errors.As(err, &pe) {
					t.Fatalf("chunk %d: error without position: %v", i, err)
				}
				return
			}
			if err := c.Validate(&sc); err != nil {
				t.Fatalf("chunk %d does not match the schema: %v", i, err)
			}
		}
		if r.Header.RowCount > 1<<16 && len(r.alive) == 0 {
			return // rows without columns: nothing to compare
		}
		out := writeAll(t, r, &WriterOptions{Uncompressed: true})
		back := readBytes(t, out, nil)
		want, got := columns(t, r), columns(t, back)
		if len(want) != len(got) {
			t.Fatalf("round trip: %d columns, want %d", len(got), len(want))
		}
		eq(t, "round trip", got, want)
		eq(t, "round trip metadata", metaStrings(back.Schema()), metaStrings(sc))
	})
}

// fuzzCodecs are the codecs FuzzBlock decodes blocks with.
var fuzzCodecs = func() []*codec {
	var out []*codec
	for _, def := range [][]byte{
		appendCodecDef(nil, "Single", nil), appendCodecDef(nil, "Boolean", nil), appendCodecDef(nil, "DvBool", nil),
		appendCodecDef(nil, "TextSpan", nil), appendCodecDef(nil, "DateTimeOffset", nil), appendCodecDef(nil, "DateTime", nil),
		(&codec{prim: pR4, vector: true, dims: []int{0}}).encode(nil),
		(&codec{prim: pR4, vector: true, dims: []int{5}}).encode(nil),
		(&codec{prim: pText, vector: true, dims: []int{3}}).encode(nil),
		(&codec{prim: pBool, vector: true, dims: []int{0}}).encode(nil),
		(&codec{prim: pU2, keyCount: 9, vector: true, dims: []int{2, 2}}).encode(nil),
	} {
		c, err := (&bytesReader{b: def}).readCodec()
		if err != nil {
			panic(err)
		}
		out = append(out, c)
	}
	return out
}()

// FuzzBlock decodes arbitrary bytes as a block of each codec; what decodes must encode back to
// a block that decodes to the same values.
func FuzzBlock(f *testing.F) {
	src := allTypes(6, 6)
	for i, st := range src.schema.Streams[:20] {
		c, err := codecFor(&st)
		if err != nil {
			f.Fatal(err)
		}
		b := newBuilder(&src.schema.Streams[i], c)
		if err := b.add(&src.chunks[0].Streams[i], 0, 6); err != nil {
			f.Fatal(err)
		}
		raw, _ := b.encode()
		for k := range fuzzCodecs {
			f.Add(uint8(k), uint8(6), raw)
		}
	}
	f.Fuzz(func(t *testing.T, which, n uint8, data []byte) {
		c := fuzzCodecs[int(which)%len(fuzzCodecs)]
		fr, err := decodeBlock(c, append([]byte(nil), data...), int(n), layAuto, 1<<20)
		if err != nil {
			var be *blockError
			if !errors.As(err, &be) || be.off < 0 || be.off > len(data) {
				t.Fatalf("error without a valid block offset: %v", err)
			}
			return
		}
		st := streamOf(c)
		st.Name = "x"
		if fr.sparse {
			st.Storage = mlfeed.Sparse
		}
		d := mlfeed.StreamData{SeqStart: seqStart(int(n)), SampleStart: fr.starts, Indices: fr.indices, Values: fr.values}
		sc := mlfeed.Schema{Streams: []mlfeed.Stream{st}}
		if err := (&mlfeed.Chunk{Sequences: int(n), Streams: []mlfeed.StreamData{d}}).Validate(&sc); err != nil {
			t.Fatalf("decoded block does not match its stream: %v", err)
		}
		wc, err := codecFor(&st) // the codec the writer uses (Boolean for DvBool)
		if err != nil {
			t.Fatal(err)
		}
		b := newBuilder(&st, wc)
		if err := b.add(&d, 0, int(n)); err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		raw, err := b.encode()
		if err != nil {
			t.Fatal(err)
		}
		fr2, err := decodeBlock(wc, raw, int(n), layAuto, 1<<20)
		if err != nil {
			t.Fatalf("re-encoded block does not decode: %v", err)
		}
		d2 := mlfeed.StreamData{SeqStart: d.SeqStart, SampleStart: fr2.starts, Indices: fr2.indices, Values: fr2.values}
		for s := int64(0); s < int64(n); s++ {
			if a, b := sampleString(&st, &d, s), sampleString(&st, &d2, s); a != b {
				t.Fatalf("row %d: %s after re-encoding, want %s", s, b, a)
			}
		}
	})
}
