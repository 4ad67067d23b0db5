package parquet

import (
	"context"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestTestdata reads the files of testdata/ (written by DuckDB and by mlfeed) and checks
// their schema and some values, without node.
func TestTestdata(t *testing.T) {
	rd, err := Open("testdata/duckdb.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if n, _ := mlfeed.Totals(rd.Chunks()); n != 2500 || len(rd.Chunks()) < 2 {
		t.Errorf("%d rows in %d chunks, want 2500 in 2 or more", n, len(rd.Chunks()))
	}
	var got []string
	for _, st := range rd.Schema().Streams {
		got = append(got, st.String())
	}
	want := []string{"i dense int32 1", "d dense float64 1", "u dense uint8 1", "b dense bool 1",
		"s dense string 1", "e dense string 1", "v dense float32 3", "l dense float64 2", "sp sparse float32 variable"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streams %q\nwant %q", got, want)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Row 7: i, i/2, i%200, i%2==0, 'row i', ['x','y','z'][i%3], [i, i+1, i+2], [i, 2i],
	// {indices: [i%5, 7], values: [1.5, i]}.
	if v := c.Streams[1].Values.Float64s()[7]; v != 3.5 {
		t.Errorf("d %v", v)
	}
	if v := c.Streams[3].Values.Bytes[7]; v != 0 {
		t.Errorf("b %v", v)
	}
	if v := c.Streams[4].Values.Strings[7]; v != "row 7" {
		t.Errorf("s %q", v)
	}
	if v := c.Streams[5].Values.Strings[7]; v != "y" {
		t.Errorf("e %q", v)
	}
	if v := c.Streams[6].Values.Float32s()[21:24]; !reflect.DeepEqual(v, []float32{7, 8, 9}) {
		t.Errorf("v %v", v)
	}
	sp := c.Streams[8]
	if from, to := sp.SampleStart[7], sp.SampleStart[8]; !reflect.DeepEqual(sp.Indices[from:to], []int32{2, 7}) ||
		!reflect.DeepEqual(sp.Values.Float32s()[from:to], []float32{1.5, 7}) {
		t.Errorf("sp %v %v", sp.Indices[from:to], sp.Values.Float32s()[from:to])
	}

	nulls, err := openFile("testdata/duckdb-null.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer nulls.Close()
	arrowtest.CheckNull(t, nulls, ErrUnsupported)

	arrowtest.ReadAll(t, "testdata/mlfeed-*", openFile)
}

// TestOpenReader opens a file through the registry's OpenReader, as objects in object
// storage are: from an io.ReaderAt, reading only the ranges needed.
func TestOpenReader(t *testing.T) {
	arrowtest.CheckOpenReader(t, "parquet", "testdata/duckdb.parquet", 2500)
}
