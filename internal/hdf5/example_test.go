package hdf5_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/hdf5"
)

// Write a file with a group, a string attribute and a compressed dataset, then read it back.
func Example() {
	name := filepath.Join(os.TempDir(), "example.h5")
	defer os.Remove(name)
	w, err := hdf5.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	data := make([]byte, 6*4)
	for i := 0; i < 6; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(10*i))
	}
	if err := w.WriteDataset("/g", "x", mlfeed.Int32, []uint64{3, 2}, data, hdf5.DatasetOptions{ChunkRows: 2, Level: 6}); err != nil {
		log.Fatal(err)
	}
	if err := w.SetAttr("/g", "note", "three rows"); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := hdf5.Open(name)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	g, err := f.Get("/g")
	if err != nil {
		log.Fatal(err)
	}
	a, err := g.Attr("note")
	if err != nil {
		log.Fatal(err)
	}
	note, _ := a.String()
	o, err := g.Child("x")
	if err != nil {
		log.Fatal(err)
	}
	d, err := o.Dataset()
	if err != nil {
		log.Fatal(err)
	}
	rows := make([]byte, 2*d.RowLen()*uint64(d.Type.Size)) // rows 1 and 2
	if err := d.ReadRows(rows, 1, 2); err != nil {
		log.Fatal(err)
	}
	fmt.Println(note, d.Type, d.Dims, d.Layout(), d.Filters())
	for i := 0; i < 4; i++ {
		fmt.Print(int32(binary.LittleEndian.Uint32(rows[4*i:])), " ")
	}
	fmt.Println()
	// Output:
	// three rows int32 [3 2] chunked [deflate]
	// 20 30 40 50
}
