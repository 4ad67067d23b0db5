package all_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
)

// holdsBytes lists the formats whose files hold opaque byte strings (mlfeed.Bytes) and read
// them back as such; every other writer refuses a Bytes stream.
var holdsBytes = map[string]bool{"arrow": true, "parquet": true, "tfrecord": true, "webdataset": true, "mds": true}

// A Bytes stream is written and read back byte for byte by the formats that hold bytes, and
// refused by every other writer with an error that names the stream and means exit 2
// (mlfeed.ErrUnsupported), never written as text or numbers.
func TestBytesStream(t *testing.T) {
	dir := t.TempDir()
	vals := []string{"\x00\xff\x89PNG\r\n", "", "plain", string(bytes.Repeat([]byte{0xc3}, 3))}
	backing := []byte(strings.Join(vals, ""))
	strs := make([]string, len(vals))
	at := 0
	for i, v := range vals {
		strs[i] = unsafe.String(unsafe.SliceData(backing[at:]), len(v))
		at += len(v)
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "blob", Storage: mlfeed.Dense, Type: mlfeed.Bytes, Dim: 1}}}
	c := &mlfeed.Chunk{Sequences: len(vals), Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2, 3, 4}, Values: mlfeed.Buffer{Type: mlfeed.Bytes, Strings: strs}}}}
	for _, ft := range format.All() {
		if !ft.Writable() {
			continue
		}
		t.Run(ft.Name, func(t *testing.T) {
			src, err := mlfeed.NewMemorySource(schema, c)
			if err != nil {
				t.Fatal(err)
			}
			out := outName(dir, "blob", ft)
			err = convert.File(context.Background(), src, out, &convert.Options{Format: ft})
			if !holdsBytes[ft.Name] {
				if err == nil {
					t.Fatalf("a bytes stream was written")
				}
				if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `"blob"`) {
					t.Fatalf("error %v: want mlfeed.ErrUnsupported naming stream \"blob\"", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := dataset.OpenFiles([]string{out}, ft.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			st := back.Schema().Streams[0]
			if st.Type != mlfeed.Bytes {
				t.Fatalf("read back as %v", st)
			}
			var got []string
			for i := range back.Chunks() {
				ch, err := back.ReadChunk(context.Background(), i)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ch.Streams[0].Values.Strings...)
			}
			if strings.Join(got, "|") != strings.Join(vals, "|") || len(got) != len(vals) {
				t.Fatalf("read back %q, want %q", got, vals)
			}
		})
	}
}
