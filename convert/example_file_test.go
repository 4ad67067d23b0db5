package convert_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
)

// Convert the MNIST test labels (gzip-compressed IDX) to CTF text, as `mlfeed convert
// t10k-labels-idx1-ubyte.gz labels.ctf` does: the output format follows the name, and the
// file appears only once complete.
func ExampleFile() {
	src, err := dataset.OpenFiles([]string{"../testdata/mnist/t10k-labels-idx1-ubyte.gz"}, "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	dir, err := os.MkdirTemp("", "mlfeed-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "labels.ctf")
	if err := convert.File(context.Background(), src, out, nil); err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.Open(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for k := 0; k < 3 && lines.Scan(); k++ {
		fmt.Println(lines.Text())
	}
	// Read back (CTF has no header: the stream is inferred from the text).
	back, err := dataset.OpenFiles([]string{out}, "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Close()
	n, _ := mlfeed.Totals(back.Chunks())
	st := back.Schema().Streams[0]
	fmt.Println(n, "sequences of", st.Name, st.Storage, st.Dim, st.Type)
	// Output:
	// |labels 7
	// |labels 2
	// |labels 1
	// 2000 sequences of labels dense 1 float32
}
