package hdf5

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// pyEntry is what testdata/h5dump.py prints for one object.
type pyEntry struct {
	Attrs  map[string]map[string]string `json:"attrs"`
	Shape  []uint64                     `json:"shape"`
	Dtype  string                       `json:"dtype"`
	Sha256 string                       `json:"sha256"`
	Chunks []uint64                     `json:"chunks"`
	Group  bool                         `json:"group"`
}

// python returns the interpreter with h5py, or skips the test.
func python(t testing.TB) string {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skip("python3 with h5py not available")
	}
	return py
}

// pyDump runs testdata/h5dump.py on files.
func pyDump(t *testing.T, files []string) map[string]map[string]pyEntry {
	py := python(t)
	out, err := exec.Command(py, append([]string{"testdata/h5dump.py"}, files...)...).Output()
	if err != nil {
		t.Fatalf("h5dump.py: %v", err)
	}
	var res map[string]map[string]pyEntry
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// goDump reads a file with this package into the same shape as h5dump.py prints.
func goDump(name string) (map[string]pyEntry, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := map[string]pyEntry{}
	var walk func(o *Object, depth int) error
	walk = func(o *Object, depth int) error {
		e := pyEntry{Attrs: map[string]map[string]string{}}
		as, err := o.Attrs()
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Type.Class == String || a.Type.Class == VarString {
				s, err := a.String()
				if err != nil {
					return err
				}
				e.Attrs[a.Name] = map[string]string{"str": s}
			} else {
				e.Attrs[a.Name] = map[string]string{"other": ""}
			}
		}
		if o.IsDataset() {
			d, err := o.Dataset()
			if err != nil {
				return err
			}
			e.Shape = d.Dims
			if e.Shape == nil {
				e.Shape = []uint64{}
			}
			if d.Layout() == "chunked" {
				e.Chunks = d.Chunk()
			}
			if d.Type.Class == Integer || d.Type.Class == Float {
				k := map[Class]string{Integer: "u", Float: "f"}[d.Type.Class]
				if d.Type.Signed {
					k = "i"
				}
				if d.Type.Bool {
					k = "b"
				}
				e.Dtype = fmt.Sprintf("<%s%d", k, d.Type.Size)
				buf := make([]byte, d.Len()*uint64(d.Type.Size))
				if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
					return err
				}
				sum := sha256.Sum256(buf)
				e.Sha256 = hex.EncodeToString(sum[:])
			}
		} else {
			e.Group = true
			kids, err := o.Children()
			if err != nil {
				return err
			}
			for _, k := range kids {
				c, err := o.Child(k)
				if err != nil {
					return err
				}
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
		}
		res[o.Path()] = e
		return nil
	}
	root, err := f.Root()
	if err != nil {
		return nil, err
	}
	return res, walk(root, 0)
}

// sharedFiles lists the real Binsparse test files (HDF5 ones).
func sharedFiles(t *testing.T) []string {
	var files []string
	filepath.Walk(testutil.Dir(t, "binsparse"), func(p string, info os.FileInfo, err error) error {
		if err == nil && (strings.HasSuffix(p, ".h5") || strings.HasSuffix(p, ".nc")) && !strings.Contains(p, "broken") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("no Binsparse test files")
	}
	sort.Strings(files)
	return files
}

// generated writes the h5py test files into a temporary directory.
func generated(t *testing.T) []string {
	py := python(t)
	dir := t.TempDir()
	if out, err := exec.Command(py, "testdata/gen.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.h5"))
	return files
}

func compareWithH5py(t *testing.T, files []string) {
	want := pyDump(t, files)
	for _, name := range files {
		got, err := goDump(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want[name]
		for path, we := range w {
			ge, ok := got[path]
			if !ok {
				t.Errorf("%s: %s missing", name, path)
				continue
			}
			for k, v := range we.Attrs {
				if _, isStr := v["str"]; !isStr {
					v = map[string]string{"other": ""}
				}
				if !reflect.DeepEqual(ge.Attrs[k], v) {
					t.Errorf("%s %s: attribute %s = %q, h5py %q", name, path, k, ge.Attrs[k], v)
				}
			}
			if len(ge.Attrs) != len(we.Attrs) {
				t.Errorf("%s %s: %d attributes, h5py %d", name, path, len(ge.Attrs), len(we.Attrs))
			}
			if we.Group != ge.Group || !reflect.DeepEqual(we.Shape, ge.Shape) || we.Sha256 != ge.Sha256 ||
				!reflect.DeepEqual(we.Chunks, ge.Chunks) || (we.Sha256 != "" && we.Dtype != ge.Dtype) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", name, path, ge, we)
			}
		}
		if len(got) != len(w) {
			t.Errorf("%s: %d objects, h5py %d", name, len(got), len(w))
		}
	}
}

func TestSharedFiles(t *testing.T) { compareWithH5py(t, sharedFiles(t)) }

func TestGeneratedFiles(t *testing.T) { compareWithH5py(t, generated(t)) }
