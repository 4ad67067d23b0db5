package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/inspect"
)

func TestDescribeAndValidate(t *testing.T) {
	src := demo.Source(30, 1)
	doc := inspect.Describe("demo", src, true)
	b, _ := json.Marshal(doc)
	for _, want := range []string{`"format":"demo"`, `"name":"features"`, `"shape":[28,28]`, `"sequences":30`, `"chunk_table":[`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("info lacks %s: %s", want, b)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad-idx1-ubyte")
	os.WriteFile(bad, []byte{0, 0, 8, 1, 0, 0, 0, 9, 1}, 0o644)
	var got []error
	n, err := inspect.Validate(context.Background(), bad, "", &format.Options{}, 10, func(e error) { got = append(got, e) })
	if err != nil || n != 1 || len(got) != 1 || !strings.Contains(got[0].Error(), "byte offset 9") {
		t.Fatalf("truncated IDX: %d problems %v, %v", n, got, err)
	}
	if _, err := inspect.Validate(context.Background(), bad, "nosuch", &format.Options{}, 10, func(error) {}); !inspect.IsUsage(err) {
		t.Fatalf("unknown format: %v", err)
	}
}

// A check the system stops (a temporary file that cannot be made, for a gzip payload over
// max_memory) is an error of its own, not a problem of the file: the file was not checked.
func TestValidateSystemError(t *testing.T) {
	dir := t.TempDir()
	gz := filepath.Join(dir, "images-idx3-ubyte.gz")
	if err := convert.File(context.Background(), demo.Source(200, 1), gz, &convert.Options{Streams: []string{"features"}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	opts := &format.Options{Params: map[string]string{"max_memory": "1000"}}
	var got []error
	n, err := inspect.Validate(context.Background(), gz, "", opts, 10, func(e error) { got = append(got, e) })
	if n != 0 || len(got) != 0 || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), gz) {
		t.Errorf("no temporary directory: %d problems %v, error %v; want no problem and an error naming the file", n, got, err)
	}
}

// Describe gives the document `mlfeed info --json` prints.
func ExampleDescribe() {
	doc := inspect.Describe("demo", demo.Source(100, 1), false)
	for _, st := range doc.Streams {
		fmt.Println(st.Name, st.Storage, st.Type, st.Shape)
	}
	fmt.Println(doc.Sequences, "sequences")
	// Output:
	// features dense uint8 [28 28]
	// labels dense uint8 [1]
	// 100 sequences
}
