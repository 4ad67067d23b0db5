package arrow

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/format"
)

// nonNullable are the columns of the integration files' generated_primitive without nulls.
var nonNullable = []string{"bool_nonnullable", "int8_nonnullable", "int16_nonnullable", "int32_nonnullable",
	"int64_nonnullable", "uint8_nonnullable", "uint16_nonnullable", "uint32_nonnullable", "uint64_nonnullable",
	"float32_nonnullable", "float64_nonnullable", "binary_nonnullable", "utf8_nonnullable",
	"fixedsizebinary_19_nonnullable", "fixedsizebinary_120_nonnullable"}

// readAll reads the values of every chunk of the named file's columns (copied: a mapped
// file's chunks do not outlive its reader), mapped (Open's default) or not.
func readAll(t *testing.T, name string, noMmap bool) [][]string {
	t.Helper()
	rd, err := Open(name, &ReaderOptions{Columns: nonNullable, NoMmap: noMmap})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out [][]string
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatalf("%s chunk %d: %v", name, i, err)
		}
		var vals []string
		for _, d := range c.Streams {
			vals = append(vals, string(d.Values.Bytes)+"\x00"+strings.Join(d.Values.Strings, "\x00"))
		}
		out = append(out, vals)
	}
	return out
}

// TestBigEndian reads the Arrow project's big-endian integration file as its little-endian
// twin, mapped or not. arrow-go swaps big-endian buffers in place, which its mapped file
// reader cannot do (a caught nil dereference, reported as invalid data, before): such files
// are read through ReadAt.
func TestBigEndian(t *testing.T) {
	le := readAll(t, "testdata/integration-le-primitive.arrow", false)
	for _, noMmap := range []bool{false, true} {
		be := readAll(t, "testdata/integration-be-primitive.arrow", noMmap)
		if len(be) != len(le) {
			t.Fatalf("%d chunks, little-endian %d", len(be), len(le))
		}
		for i := range le {
			for k := range le[i] {
				if be[i][k] != le[i][k] {
					t.Errorf("mmap %v, chunk %d, %s: differs from the little-endian file", !noMmap, i, nonNullable[k])
				}
			}
		}
	}
}

// TestStreamDetection: an IPC stream whose schema message is longer than the head detection
// reads (here 1,936 bytes) is Arrow by its content, whatever its name (it was an unknown
// format under a name not ending .arrows).
func TestStreamDetection(t *testing.T) {
	f, err := format.Detect("testdata/integration-be-primitive.stream")
	if err != nil || f.Name != "arrow" {
		t.Fatalf("detected %v, %v; want arrow", f, err)
	}
	if Match([]byte("\xff\xff\xff\xff\x10\x00\x00\x00 not a flatbuffer ")) {
		t.Errorf("a marker and a length before no schema message matched")
	}
	// Arrow 0.14's streams frame messages by their length alone: detected, and read as the
	// file 0.14.1 wrote (they were an unknown format under a name not ending .arrows).
	if f, err := format.Detect("testdata/integration-0.14.1-primitive.stream"); err != nil || f.Name != "arrow" {
		t.Fatalf("Arrow 0.14.1's stream: detected %v, %v; want arrow", f, err)
	}
	le, old := readAll(t, "testdata/integration-0.14.1-primitive.arrow", false), readAll(t, "testdata/integration-0.14.1-primitive.stream", false)
	if len(old) != len(le) {
		t.Fatalf("%d chunks, the file %d", len(old), len(le))
	}
	for i := range le {
		for k := range le[i] {
			if old[i][k] != le[i][k] {
				t.Errorf("chunk %d, %s: differs from the file's", i, nonNullable[k])
			}
		}
	}
}

// TestNestedLargeOffsets: a column of lists of lists whose first row has no list learns the
// sample length from the first row that has one (it was invalid data, "the first row has no
// samples"); its nulls are then what mlfeed cannot hold.
func TestNestedLargeOffsets(t *testing.T) {
	rd, err := Open("testdata/integration-le-nested-large-offsets.stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var err2 error
	for i := range rd.Chunks() {
		if _, err2 = rd.ReadChunk(context.Background(), i); err2 != nil {
			break
		}
	}
	if !errors.Is(err2, ErrUnsupported) || !strings.Contains(err2.Error(), "null value") {
		t.Fatalf("got %v, want the nulls unsupported", err2)
	}
}
