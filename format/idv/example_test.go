package idv_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/idv"
)

// Write a small table of a text column and a fixed-size vector column, then read it back.
func Example() {
	dir, err := os.MkdirTemp("", "idv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "table.idv")

	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "Term", Type: mlfeed.String, Dim: 1},
		{Name: "Features", Type: mlfeed.Float32, Dim: 2},
	}}
	features := mlfeed.NewBuffer(mlfeed.Float32, 6)
	copy(features.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	chunk := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2, 3}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"Bad", "Fair", "Good"}}},
		{SeqStart: []int64{0, 1, 2, 3}, Values: features},
	}}

	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	w, err := idv.NewWriter(f, schema, nil) // DEFLATE, BinarySaver's block sizes
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteChunk(chunk); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	r, err := idv.Open(name, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, st := range r.Schema().Streams {
		fmt.Println(st)
	}
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Streams[0].Values.Strings, c.Streams[1].Values.Float32s())
	fmt.Println(r.Details()["column 1 Features"].(map[string]any)["codec"])
	// Output:
	// Term dense string 1
	// Features dense float32 2
	// [Bad Fair Good] [1 2 3 4 5 6]
	// VBuffer(Single, [2])
}

// Read an IDV stream stored inside a larger file, here an uncompressed entry of a zip archive
// (as in ML.NET model zips): the reader takes an io.SectionReader over the stream's bytes.
// (A DEFLATE-compressed entry would be read into memory and given as a bytes.Reader.)
func ExampleNewReader() {
	// Build a zip holding one IDV stream, stored without compression.
	var idvBytes bytes.Buffer
	tmp, err := os.CreateTemp("", "idv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "Label", Type: mlfeed.Bool, Dim: 1}}}
	w, err := idv.NewWriter(tmp, schema, nil)
	if err != nil {
		log.Fatal(err)
	}
	labels := mlfeed.NewBuffer(mlfeed.Bool, 3)
	copy(labels.Bytes, []byte{1, 0, 1})
	if err := w.WriteChunk(&mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2, 3}, Values: labels}}}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	tmp.Seek(0, io.SeekStart)
	io.Copy(&idvBytes, tmp)
	tmp.Close()

	var archive bytes.Buffer
	zw := zip.NewWriter(&archive)
	entry, _ := zw.CreateHeader(&zip.FileHeader{Name: "Model/Schema.idv", Method: zip.Store})
	entry.Write(idvBytes.Bytes())
	zw.Close()

	// Find the entry and read the IDV stream in place.
	zr, err := zip.NewReader(bytes.NewReader(archive.Bytes()), int64(archive.Len()))
	if err != nil {
		log.Fatal(err)
	}
	f := zr.File[0]
	start, err := f.DataOffset()
	if err != nil {
		log.Fatal(err)
	}
	section := io.NewSectionReader(bytes.NewReader(archive.Bytes()), start, int64(f.UncompressedSize64))
	r, err := idv.NewReader(section, section.Size(), &idv.ReaderOptions{FileName: f.Name})
	if err != nil {
		log.Fatal(err)
	}
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Schema().Streams[0], c.Streams[0].Values.Bytes)
	// Output:
	// Label dense bool 1 [1 0 1]
}
