package view

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
)

// gated is a source whose chunks from 2 on wait until open is closed.
type gated struct {
	*mlfeed.MemorySource
	open chan struct{}
}

func (g *gated) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i >= 2 {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.MemorySource.ReadChunk(ctx, i)
}

func (g *gated) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return g.ReadChunk(ctx, i)
}

// TestStatsFillIn checks that /api/stats gives the figures of the chunks read so far while
// the pass goes on, and the whole figures at its end.
func TestStatsFillIn(t *testing.T) {
	full := open(t, mnistPaths()...)
	c, err := full.Source.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*mlfeed.Chunk
	for q := 0; q < c.Sequences; q += 500 {
		parts = append(parts, c.Slice(q, min(q+500, c.Sequences)))
	}
	mem, err := mlfeed.NewMemorySource(full.Source.Schema(), parts...)
	if err != nil {
		t.Fatal(err)
	}
	g := &gated{mem, make(chan struct{})}
	s, err := New([]DataSet{{Name: "gated", Format: "memory", Source: g}}, Options{Token: testToken, Port: testPort})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	var st StatsInfo
	for deadline := time.Now().Add(time.Minute); st.Done < 1000 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		getJSON(t, s, "/api/stats", &st)
	}
	if st.Done != 1000 || st.Total != 2000 || st.Finished || st.Result.Sequences != 1000 || st.Result.Streams[1].Samples != 1000 || len(st.Charts) == 0 {
		t.Fatalf("while reading: done %d of %d, finished %v, %d sequences", st.Done, st.Total, st.Finished, st.Result.Sequences)
	}
	// The browser is not held up by the pass: chunk 0's records come at once.
	var recs Records
	getJSON(t, s, "/api/records?from=10&n=5", &recs)
	if len(recs.Records) != 5 {
		t.Fatalf("records while reading: %+v", recs)
	}
	close(g.open)
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	getJSON(t, s, "/api/stats", &st)
	if st.Done != 2000 || !st.Finished || st.Result.Sequences != 2000 || st.Result.TotalSequences != 2000 {
		t.Fatalf("at the end: %+v", st)
	}
}

// TestEncodedImages serves bytes that hold PNG images as they are, and refuses others.
func TestEncodedImages(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 3, 2))
	img.SetGray(1, 1, color.Gray{Y: 200})
	var pngBytes bytes.Buffer
	if err := png.Encode(&pngBytes, img); err != nil {
		t.Fatal(err)
	}
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Bytes, Dim: 1},
		{Name: "caption", Storage: mlfeed.Dense, Type: mlfeed.String, Dim: 1},
	}}
	ch := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2}, Values: mlfeed.Buffer{Type: mlfeed.Bytes, Strings: []string{pngBytes.String(), "not an image"}}},
		{SeqStart: []int64{0, 1, 2}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"a dot", "text"}}},
	}}
	mem, err := mlfeed.NewMemorySource(sc, ch)
	if err != nil {
		t.Fatal(err)
	}
	s := server(t, DataSet{Name: "mem", Format: "memory", Source: mem})
	var info Info
	getJSON(t, s, "/api/info", &info)
	if info.Sets[0].Streams[0].Image != "encoded" || info.Sets[0].Label != "caption" {
		t.Fatalf("info %+v", info.Sets[0])
	}
	w := do(s, "/api/image?seq=0", true)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/png" || !bytes.Equal(w.Body.Bytes(), pngBytes.Bytes()) {
		t.Fatalf("PNG value: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if w := do(s, "/api/image?seq=1", true); w.Code != http.StatusNotFound {
		t.Errorf("a value that is no image: %d", w.Code)
	}
	var g Grid
	getJSON(t, s, "/api/grid", &g)
	if len(g.Items) != 2 || g.Items[0].Label != "a dot" || g.Items[0].NotImage != "" || g.Items[1].NotImage != "application/octet-stream" {
		t.Errorf("grid %+v", g)
	}
	var recs Records
	getJSON(t, s, "/api/records", &recs)
	if !recs.Records[0].Streams[0].Image || recs.Records[1].Streams[0].Image || recs.Records[1].Streams[0].Text != "[12 bytes, application/octet-stream]" {
		t.Errorf("records %+v", recs.Records)
	}
}

// TestRecordsBounded gives fewer records than asked when their values are long.
func TestRecordsBounded(t *testing.T) {
	const streams, seqs = 1100, 3
	long := strings.Repeat("x", 5000)
	var sc mlfeed.Schema
	ch := &mlfeed.Chunk{Sequences: seqs}
	for k := 0; k < streams; k++ {
		sc.Streams = append(sc.Streams, mlfeed.Stream{Name: "s" + strconv.Itoa(k), Storage: mlfeed.Dense, Type: mlfeed.String, Dim: 1})
		ch.Streams = append(ch.Streams, mlfeed.StreamData{SeqStart: []int64{0, 1, 2, 3}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{long, long, long}}})
	}
	mem, err := mlfeed.NewMemorySource(sc, ch)
	if err != nil {
		t.Fatal(err)
	}
	s := server(t, DataSet{Name: "wide", Source: mem})
	var recs Records
	getJSON(t, s, "/api/records?n=3", &recs)
	if len(recs.Records) != 1 || !recs.Records[0].Streams[0].Cut || len(recs.Records[0].Streams[0].Text) != maxText {
		t.Fatalf("%d records, the first value %d bytes", len(recs.Records), len(recs.Records[0].Streams[0].Text))
	}
}
