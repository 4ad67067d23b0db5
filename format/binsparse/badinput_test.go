package binsparse

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
)

// writeRaw writes arrays and a descriptor string into a new HDF5 file as-is, so that tests can
// make files whose descriptor and arrays disagree.
func writeRaw(t *testing.T, arrays map[string]mlfeed.Buffer, desc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "raw.bsp.h5")
	f, err := h5.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for n, b := range arrays {
		if err := f.Write("/", n, b, h5.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if desc != "" {
		if err := f.SetAttr("/", "binsparse", desc); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMismatchedFiles(t *testing.T) {
	csr := `{"binsparse": {"version": "0.1", "format": "CSR", "shape": [3, 4], "number_of_stored_values": 2,
		"data_types": {"pointers_to_1": "uint8", "indices_1": "uint8", "values": "float64"}}}`
	good := map[string]mlfeed.Buffer{"pointers_to_1": u8(0, 1, 1, 2), "indices_1": u8(3, 0), "values": f64(1, 2)}
	with := func(name string, b mlfeed.Buffer) map[string]mlfeed.Buffer {
		m := map[string]mlfeed.Buffer{}
		for k, v := range good {
			m[k] = v
		}
		if b.Type == mlfeed.Invalid {
			delete(m, name)
		} else {
			m[name] = b
		}
		return m
	}
	if _, err := ReadFile(writeRaw(t, good, csr)); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	for _, c := range []struct {
		name   string
		arrays map[string]mlfeed.Buffer
		desc   string
		array  string // the array the error must name, if any
		want   error
	}{
		{"no descriptor", good, "", "", ErrFormat},
		{"descriptor not JSON", good, "{binsparse", "", ErrFormat},
		{"unknown format", good, strings.Replace(csr, `"CSR"`, `"BSR"`, 1), "", ErrUnsupported},
		{"unknown type", good, strings.Replace(csr, `"float64"`, `"float16"`, 1), "", ErrFormat},
		{"missing array", with("pointers_to_1", mlfeed.Buffer{}), csr, "pointers_to_1", ErrFormat},
		{"short pointers", with("pointers_to_1", u8(0, 1, 2)), csr, "pointers_to_1", ErrFormat},
		{"index out of bounds", with("indices_1", u8(4, 0)), csr, "indices_1", ErrFormat},
		{"values too short", with("values", f64(1)), csr, "values", ErrFormat},
		{"int8 values stored as float", good, strings.Replace(csr, `"values": "float64"`, `"values": "int8"`, 1), "values", ErrFormat},
		{"values out of range", with("values", mlfeed.Buffer{Type: mlfeed.Int16, Bytes: []byte{1, 0, 0, 1}}), strings.Replace(csr, `"values": "float64"`, `"values": "int8"`, 1), "values", ErrFormat},
		{"float indices", with("indices_1", f64(3, 0)), csr, "indices_1", ErrFormat},
		{"nnz mismatch", good, strings.Replace(csr, `"number_of_stored_values": 2`, `"number_of_stored_values": 3`, 1), "", ErrFormat},
		{"iso of two", good, strings.Replace(csr, `"float64"`, `"iso[float64]"`, 1), "values", ErrFormat},
		{"odd complex", with("values", f64(1, 2, 3)), strings.Replace(csr, `"float64"`, `"complex[float64]"`, 1), "values", ErrFormat},
		{"bint8 as float", good, strings.Replace(csr, `"float64"`, `"bint8"`, 1), "values", ErrFormat},
		{"version 0.2", good, strings.Replace(csr, `"0.1"`, `"0.2"`, 1), "", ErrUnsupported},
	} {
		p := writeRaw(t, c.arrays, c.desc)
		_, err := ReadFile(p)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v does not name the file", c.name, err)
		}
		var ae *ArrayError
		if c.array != "" && (!errors.As(err, &ae) || ae.Array != c.array) {
			t.Errorf("%s: %v does not name array %s", c.name, err, c.array)
		}
	}
}

// TestCorruptHDF5 truncates and flips bytes of a compressed and an uncompressed file: reading
// each variant, in a child process of its own, must fail cleanly or return a valid matrix
// within 4 seconds, and never crash.
func TestCorruptHDF5(t *testing.T) {
	if p := os.Getenv("BINSPARSE_CORRUPT_FILE"); p != "" {
		corruptChild(p)
		return
	}
	r := rand.New(rand.NewSource(3))
	dir := t.TempDir()
	m, err := New(COOR, []int64{50, 60}, map[string]mlfeed.Buffer{
		"indices_0": u8(0, 3, 3, 9, 49), "indices_1": u8(7, 1, 59, 0, 0), "values": f64(1, 2, 3, 4, 5)}, false)
	if err != nil {
		t.Fatal(err)
	}
	big, err := m.Convert(DMATR, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 25
	if testing.Short() {
		n = 8
	}
	outcomes := map[string]int{}
	for _, level := range []int{NoCompression, 6} {
		src := filepath.Join(dir, "src.bsp.h5")
		if err := WriteFile(src, big, &WriteOptions{Level: level, Chunk: 4096}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			bad := append([]byte(nil), data...)
			if i%3 == 0 {
				bad = bad[:r.Intn(len(bad))]
			} else {
				for k := 0; k < 1+r.Intn(16); k++ {
					bad[r.Intn(len(bad))] ^= byte(1 + r.Intn(255))
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("bad%d_%d.bsp.h5", level+1, i))
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCorruptHDF5$")
			cmd.Env = append(os.Environ(), "BINSPARSE_CORRUPT_FILE="+p)
			out, err := cmd.CombinedOutput()
			timedOut := ctx.Err() != nil
			cancel()
			if timedOut {
				t.Errorf("%s: the reader did not return within 4 s", filepath.Base(p))
				if keep := os.Getenv("BINSPARSE_KEEP"); keep != "" {
					os.WriteFile(filepath.Join(keep, filepath.Base(p)), bad, 0o644)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: the reader process failed: %v\n%s", filepath.Base(p), err, out)
				continue
			}
			switch {
			case strings.Contains(string(out), "outcome: error"):
				outcomes["error"]++
			case strings.Contains(string(out), "outcome: valid"):
				outcomes["read"]++
			default:
				t.Errorf("%s: %s", filepath.Base(p), out)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// corruptChild reads one corrupt file and reports the outcome; bad outcomes exit non-zero.
func corruptChild(p string) {
	got, err := ReadFile(p)
	switch {
	case err != nil:
		if !errors.Is(err, mlfeed.ErrFormat) && !errors.Is(err, mlfeed.ErrTruncated) && !errors.Is(err, mlfeed.ErrUnsupported) && !errors.Is(err, mlfeed.ErrTooLarge) {
			fmt.Println("error wraps no mlfeed sentinel:", err)
			os.Exit(3)
		}
		fmt.Println("outcome: error:", err)
	default:
		if err := got.Validate(); err != nil {
			fmt.Println("read an invalid matrix:", err)
			os.Exit(3)
		}
		fmt.Println("outcome: valid")
	}
}
