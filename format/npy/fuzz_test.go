package npy

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader reads arbitrary bytes as a .npy or .npz file: an error, or data that writes back
// (as the same kind of file) and reads again to the same values, never a panic.
func FuzzReader(f *testing.F) {
	testutil.Seed(f, filepath.Join("testdata", "*.np[yz]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			return
		}
		vals, err := readValues(rd)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, rd.Schema(), &WriterOptions{Archive: rd.npz})
		if err != nil {
			t.Fatalf("writer refuses what the reader read: %v", err)
		}
		testutil.WriteAll(t, rd, w)
		again, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		vals2, err := readValues(again)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		for k := range vals {
			if !bytes.Equal(vals[k].Bytes, vals2[k].Bytes) || len(vals[k].Strings) != len(vals2[k].Strings) {
				t.Fatalf("stream %d changed in the round trip", k)
			}
			for j := range vals[k].Strings {
				if vals[k].Strings[j] != vals2[k].Strings[j] {
					t.Fatalf("stream %d string %d: %q became %q", k, j, vals[k].Strings[j], vals2[k].Strings[j])
				}
			}
		}
	})
}

// readValues decodes every chunk and joins each stream's values.
func readValues(rd *Reader) ([]mlfeed.Buffer, error) {
	sc := rd.Schema()
	out := make([]mlfeed.Buffer, len(sc.Streams))
	for k := range out {
		out[k].Type = sc.Streams[k].Type
	}
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			return nil, err
		}
		if err := c.Validate(&sc); err != nil {
			return nil, err
		}
		for k := range out {
			out[k].Append(c.Streams[k].Values)
		}
	}
	return out, nil
}
