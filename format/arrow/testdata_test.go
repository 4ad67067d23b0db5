package arrow

import (
	"context"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestTestdata reads the files of testdata/ (written by apache-arrow and by mlfeed) and checks
// their schema and some values, without node.
func TestTestdata(t *testing.T) {
	file, err := Open("testdata/apache-arrow-js.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if n := len(file.Chunks()); n != 2 {
		t.Errorf("%d chunks, want 2", n)
	}
	var got []string
	for _, st := range file.Schema().Streams {
		got = append(got, st.String())
	}
	want := []string{"f32 dense float32 1", "i64 dense int64 1", "u8 dense uint8 1", "flag dense bool 1",
		"name dense string 1", "color dense string 1", "vec dense float32 3", "pair dense float64 2",
		"half dense float32 1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streams %q\nwant %q", got, want)
	}
	c, err := file.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Row 4: i/4, i*1000003-7, i%256, i%3==0, "row i é", colors[i%3], [i, -i, i/2], [i/10, i/5],
	// and a float16 i/8 - 0.5 + (i%3)*1024.
	if v := c.Streams[0].Values.Float32s()[4]; v != 1 {
		t.Errorf("f32 %v", v)
	}
	if v := c.Streams[1].Values.Int64s()[4]; v != 4*1000003-7 {
		t.Errorf("i64 %v", v)
	}
	if v := c.Streams[3].Values.Bytes[3]; v != 1 {
		t.Errorf("flag %v", v)
	}
	if v := c.Streams[4].Values.Strings[4]; v != "row 4 é" {
		t.Errorf("name %q", v)
	}
	if v := c.Streams[5].Values.Strings[4]; v != "green" {
		t.Errorf("color %q", v)
	}
	if v := c.Streams[6].Values.Float32s()[12:15]; !reflect.DeepEqual(v, []float32{4, -4, 2}) {
		t.Errorf("vec %v", v)
	}
	if v := c.Streams[7].Values.Float64s()[8:10]; !reflect.DeepEqual(v, []float64{0.4, 0.8}) {
		t.Errorf("pair %v", v)
	}
	if v := c.Streams[8].Values.Float32s()[4]; v != 1024 {
		t.Errorf("half %v", v)
	}

	stream, err := Open("testdata/apache-arrow-js.arrows", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := mlfeed.Diff(context.Background(), file, stream); err != nil {
		t.Errorf("stream and file differ: %v", err)
	}

	nulls, err := openFile("testdata/apache-arrow-js-null.arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer nulls.Close()
	arrowtest.CheckNull(t, nulls, ErrUnsupported)

	// mlfeed's own files: every chunk decodes, and the sequences file keeps its lists.
	arrowtest.ReadAll(t, "testdata/mlfeed-*", openFile)
}

// TestOpenReader opens a file through the registry's OpenReader, as objects in object
// storage are: from an io.ReaderAt, reading only the ranges needed.
func TestOpenReader(t *testing.T) {
	arrowtest.CheckOpenReader(t, "arrow", "testdata/apache-arrow-js.arrows", 12)
}
