package hdf5_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/hdf5"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// compoundDir holds files of compound datasets written by h5py and PyTables, and the values
// they wrote (gen.py there).
const compoundDir = "../../internal/hdf5/testdata/compound"

// TestCompound reads every field of the compound datasets of compoundDir, one dataset at a
// time, in chunks of 3 rows, and compares them with what h5py read when the files were made.
func TestCompound(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compoundDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]map[string]struct {
		SHA256 string   `json:"sha256"`
		Hex    []string `json:"hex"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	fields := 0
	for file, sets := range want {
		for set, members := range sets {
			r, err := hdf5.Open(filepath.Join(compoundDir, file), &hdf5.ReaderOptions{Datasets: []string{set}, ChunkRows: 3})
			if err != nil {
				t.Fatalf("%s %s: %v", file, set, err)
			}
			got := readFields(t, r)
			if len(r.Chunks()) > 1 {
				testutil.ConcurrentReads(t, r) // the records' buffers are pooled between reads
			}
			r.Close()
			if len(got) != len(members) {
				t.Errorf("%s %s: %d streams, want %d", file, set, len(got), len(members))
			}
			for name, w := range members {
				v, ok := got[strings.TrimPrefix(set, "/")+"."+name]
				if !ok {
					t.Errorf("%s %s: no stream for field %s", file, set, name)
					continue
				}
				fields++
				if w.Hex != nil {
					var hx []string
					for _, s := range v.Strings {
						hx = append(hx, hex.EncodeToString([]byte(s)))
					}
					if !reflect.DeepEqual(hx, w.Hex) {
						t.Errorf("%s %s.%s: %q, want %v", file, set, name, v.Strings, w.Hex)
					}
					continue
				}
				if h := sha256.Sum256(v.Bytes); hex.EncodeToString(h[:]) != w.SHA256 {
					t.Errorf("%s %s.%s: %s values differ from h5py's", file, set, name, v.Type)
				}
			}
		}
	}
	if fields < 60 {
		t.Errorf("%d fields compared", fields)
	}
}

// readFields returns each stream's values over all chunks.
func readFields(t *testing.T, r *hdf5.Reader) map[string]mlfeed.Buffer {
	t.Helper()
	out := map[string]mlfeed.Buffer{}
	streams := r.Schema().Streams
	for _, st := range streams {
		out[st.Name] = mlfeed.Buffer{Type: st.Type}
	}
	var prev *mlfeed.Chunk
	for i := range r.Chunks() {
		c, err := r.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatal(err)
		}
		for k, st := range streams {
			b := out[st.Name]
			b.Type = st.Type
			b.Bytes = append(b.Bytes, c.Streams[k].Values.Bytes...)
			b.Strings = append(b.Strings, c.Streams[k].Values.Strings...)
			out[st.Name] = b
		}
		prev = c
	}
	return out
}

// TestCompoundSchema checks the streams of a compound dataset: names, types, shapes, and the
// members left out, with why.
func TestCompoundSchema(t *testing.T) {
	for _, file := range []string{"types_earliest.h5", "types_latest.h5"} {
		var log strings.Builder
		r, err := hdf5.Open(filepath.Join(compoundDir, file), &hdf5.ReaderOptions{Datasets: []string{"rec", "plain"}, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, st := range r.Schema().Streams {
			got = append(got, st.String())
		}
		want := "rec.i1 dense int8 1,rec.i2 dense int16 1,rec.i4 dense int32 1,rec.i8 dense int64 1," +
			"rec.u1 dense uint8 1,rec.u2 dense uint16 1,rec.u4 dense uint32 1,rec.u8 dense uint64 1," +
			"rec.bi2 dense int16 1,rec.bu4 dense uint32 1,rec.bi8 dense int64 1," +
			"rec.f2 dense float32 1,rec.f4 dense float32 1,rec.f8 dense float64 1," +
			"rec.bf2 dense float32 1,rec.bf4 dense float32 1,rec.bf8 dense float64 1," +
			"rec.flag dense bool 1,rec.level dense int16 1,rec.name dense bytes 1," +
			"rec.vec dense float64 3,rec.mat dense int16 2x2,rec.one dense uint8 1,plain dense int32 1"
		if g := strings.Join(got, ","); g != want {
			t.Errorf("%s: streams\n%s\nwant\n%s", file, g, want)
		}
		skipped := r.Details()["skipped"].([]string)
		if len(skipped) != 2 || !strings.HasPrefix(skipped[0], `/rec field "pt": compound datatype (datatype at byte offset `) ||
			!strings.HasPrefix(skipped[1], `/rec field "vs": variable-length datatype (datatype at byte offset `) {
			t.Errorf("%s: skipped %q", file, skipped)
		}
		if !strings.Contains(log.String(), `skipped /rec field "pt"`) {
			t.Errorf("%s: log %q", file, log.String())
		}
		r.Close()
	}
	// without options: every dataset, and the compound ones' fields; grid's 6 rows differ
	_, err := hdf5.Open(filepath.Join(compoundDir, "types_latest.h5"), nil)
	if err == nil || !strings.Contains(err.Error(), "/grid [6 2]") {
		t.Errorf("all datasets: %v", err)
	}
}
