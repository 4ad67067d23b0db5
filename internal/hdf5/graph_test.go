package hdf5

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// The files of testdata/hostile.py (h5py 3.7.0, HDF5 1.10.8): object graphs with cycles, shared
// groups, soft and external links and deep chains. Each test runs under go test's timeout; the
// step counter shows the work follows the file's size, not the number of paths through it.

// walkList walks name and lists every entry as "path kind detail".
func walkList(t *testing.T, name string) ([]string, *File) {
	t.Helper()
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var got []string
	err = f.Walk(func(e WalkEntry) error {
		s := e.Path() + " "
		switch {
		case e.Seen:
			s += "seen " + e.Object.Path()
		case e.Err != nil:
			s += fmt.Sprintf("%s %s: error", e.Kind, e.Target)
		case e.Kind == SoftLink:
			s += "soft " + e.Target
		case e.Object.IsGroup():
			s += "group"
		default:
			s += "dataset"
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return got, f
}

func TestWalkGraph(t *testing.T) {
	// as h5py's visititems (objects, once each: X a a/s2 a/s2/w g g/z y) with the links it does
	// not enter
	want := []string{
		"/X dataset",
		"/a group",
		"/a/b seen /",
		"/a/s2 group",
		"/a/s2/w dataset",
		"/dangle soft link /nowhere: error",
		"/ext external link other.h5:/X: error",
		"/g group",
		"/g/Xalias seen /X",
		"/g/loop seen /g",
		"/g/rel soft z",
		"/g/z dataset",
		"/l1 soft link /l2: error",
		"/l2 soft link l1: error",
		"/s soft /X",
		"/s1 seen /a/s2",
		"/sg soft /g",
		"/shared seen /a/s2",
		"/y dataset",
	}
	for _, lib := range []string{"earliest", "latest"} {
		name := "testdata/graph_" + lib + ".h5"
		got, f := walkList(t, name)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
		if w := f.work.Load(); w > uint64(f.Size()) {
			t.Errorf("%s: %d steps for a %d-byte file", name, w, f.Size())
		}
	}
}

func TestWalkLoops(t *testing.T) {
	// the file: g['loop'] = g; f['a/b'] = f
	got, _ := walkList(t, "testdata/loops.h5")
	want := []string{"/a group", "/a/b seen /", "/g group", "/g/loop seen /g", "/x dataset"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestWalkDeep(t *testing.T) {
	for _, c := range []struct {
		lib   string
		depth int
	}{{"earliest", 60}, {"latest", 300}} {
		name := "testdata/deep_" + c.lib + ".h5"
		got, f := walkList(t, name)
		// every level: the group d and its link up to the root; then the dataset v
		if len(got) != 2*c.depth+1 {
			t.Fatalf("%s: %d entries, want %d", name, len(got), 2*c.depth+1)
		}
		leaf := strings.Repeat("/d", c.depth) + "/v dataset"
		if got[c.depth+1] != leaf {
			t.Errorf("%s: entry %d %q, want %q", name, c.depth+1, got[c.depth+1], leaf)
		}
		if w := f.work.Load(); w > uint64(f.Size()) {
			t.Errorf("%s: %d steps for a %d-byte file", name, w, f.Size())
		}
	}
}

func TestSoftLinks(t *testing.T) {
	for _, lib := range []string{"earliest", "latest"} {
		f, err := Open("testdata/graph_" + lib + ".h5")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		read := func(path string) ([]byte, error) {
			o, err := f.Get(path)
			if err != nil {
				return nil, err
			}
			d, err := o.Dataset()
			if err != nil {
				return nil, err
			}
			b := make([]byte, d.Len()*uint64(d.Type.Size))
			return b, d.ReadRows(b, 0, d.Rows())
		}
		for alias, orig := range map[string]string{"s": "X", "g/rel": "g/z", "sg/z": "g/z", "/a/b/g/loop/loop/Xalias": "/X", "s1/w": "shared/w"} {
			a, err := read(alias)
			if err != nil {
				t.Errorf("%s: %s: %v", lib, alias, err)
				continue
			}
			o, err := read(orig)
			if err != nil || !reflect.DeepEqual(a, o) {
				t.Errorf("%s: %s reads differently from %s (%v)", lib, alias, orig, err)
			}
		}
		if o, err := f.Get("s"); err != nil || o.Path() != "/s" || !o.IsDataset() {
			t.Errorf("%s: Get(s) = %v, %v; want the dataset X named /s, as h5py names it", lib, o, err)
		}
		if _, err := f.Get("dangle"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: dangling soft link: %v, want ErrNotFound", lib, err)
		}
		if _, err := f.Get("ext"); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "other.h5:/X") {
			t.Errorf("%s: external link: %v, want ErrUnsupported naming other.h5:/X", lib, err)
		}
		if _, err := f.Get("l1"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "soft links") {
			t.Errorf("%s: loop of soft links: %v, want ErrFormat", lib, err)
		}
		root, _ := f.Root()
		kids, err := root.Children()
		want := []string{"X", "a", "dangle", "ext", "g", "l1", "l2", "s", "s1", "sg", "shared", "y"}
		if err != nil || !reflect.DeepEqual(kids, want) {
			t.Errorf("%s: root's members %q, %v; want %q (h5py's keys())", lib, kids, err, want)
		}
	}
	// the file: one soft link made the file unreadable
	f, err := Open("testdata/softlink.h5")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if o, err := f.Get("s"); err != nil || !o.IsDataset() {
		t.Errorf("softlink.h5: Get(s): %v", err)
	}
}

// TestChunkOverBudget: one gzip chunk of 4096 x 1024 float32 zeros (16 MiB, testdata/
// bomb_small.h5) is refused under a budget of 1 MiB, at the chunk's offset, naming its size,
// and read under the default budget.
func TestChunkOverBudget(t *testing.T) {
	f, err := Open("testdata/bomb_small.h5")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := f.Get("X")
	if err != nil {
		t.Fatal(err)
	}
	d, err := o.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 4096)
	err = d.ReadRowsContext(smallBudget, row, 7, 1)
	var pe *mlfeed.PosError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &pe) || pe.Offset <= 0 || !strings.Contains(err.Error(), "16777216 bytes") || !strings.Contains(err.Error(), "--memory") {
		t.Errorf("budget 1 MiB: %v", err)
	}
	if err := d.ReadRows(row, 7, 1); err != nil {
		t.Errorf("default budget: %v", err)
	}
}

// TestWalkDeepMemory walks a chain of 20000 nested groups (written by this package's writer):
// the walk keeps paths as chains of names, so what it allocates grows with the file, not with
// the square of its depth (400 MB of path bytes if each level kept its path).
func TestWalkDeepMemory(t *testing.T) {
	const depth = 20000
	name := t.TempDir() + "/deep.h5"
	w, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Repeat("/d", depth)
	if err := w.WriteDataset(path, "v", mlfeed.Int32, []uint64{2}, make([]byte, 8), DatasetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var leaf string
	n := 0
	err = f.Walk(func(e WalkEntry) error {
		n++
		if e.Object != nil && e.Object.IsDataset() {
			leaf = e.Path()
		}
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil || n != depth+1 || leaf != path+"/v" {
		t.Fatalf("%d entries, leaf %.20q..., %v", n, leaf, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d levels, %d-byte file: walk allocated %d bytes", depth, f.Size(), alloc)
	if alloc > 64*uint64(f.Size()) {
		t.Errorf("walk allocated %d bytes for a %d-byte file", alloc, f.Size())
	}
}

// TestWalkSharedStorage forges graph_earliest.h5 so that group /a's symbol table message names
// /g's B-tree and local heap: two groups, one member list. The members are walked once (under
// /a, met first), so that many groups sharing one large table cannot multiply the work.
func TestWalkSharedStorage(t *testing.T) {
	b, err := os.ReadFile("testdata/graph_earliest.h5")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFile(bytes.NewReader(b), int64(len(b)), "x")
	if err != nil {
		t.Fatal(err)
	}
	table := func(path string) message {
		o, err := f.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := o.o.find(msgSymbolTable)
		if !ok {
			t.Fatalf("%s has no symbol table message", path)
		}
		return m
	}
	a, g := table("a"), table("g")
	copy(b[a.addr:], g.data[:2*f.offSize])
	f, err = NewFile(bytes.NewReader(b), int64(len(b)), "x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = f.Walk(func(e WalkEntry) error {
		if strings.HasPrefix(e.Path(), "/a/") || strings.HasPrefix(e.Path(), "/g/") {
			got = append(got, e.Path())
		}
		return nil
	})
	want := []string{"/a/Xalias", "/a/loop", "/a/rel", "/a/z"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// TestWalkDiamond walks diamond.h5 (scripts/fuzz-seeds.py): groups l0 ... l39, each linking
// the next twice (a and b), so that 2^39 paths lead to the dataset at the bottom. Each group
// is entered once, by its first path; every other link to it is a seen entry.
func TestWalkDiamond(t *testing.T) {
	got, f := walkList(t, "testdata/diamond.h5")
	const levels = 40
	// the root's 40 links l0 ... l39 and top; per level below the root's first visit, links a
	// and b; the dataset v
	if len(got) > 4*levels+2 {
		t.Fatalf("%d entries for %d groups: %q", len(got), levels, got)
	}
	var datasets int
	for _, e := range got {
		if strings.HasSuffix(e, "/v dataset") {
			datasets++
		}
	}
	if datasets != 1 {
		t.Errorf("the dataset at the bottom walked %d times, want once: %q", datasets, got)
	}
	if w := f.work.Load(); w > uint64(f.Size()) {
		t.Errorf("%d steps for a %d-byte file", w, f.Size())
	}
}
