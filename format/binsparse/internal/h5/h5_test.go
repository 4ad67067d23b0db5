package h5

import (
	"reflect"
	"strings"
	"testing"
)

// TestGroupsGraph lists the groups of files whose groups link back to themselves and to the
// root and share a group (../../../../internal/hdf5/testdata/hostile.py): each group once, as
// h5py's visititems meets them; the test's timeout bounds the work (issue 28: the walk followed
// every path, to a guard of 100000 groups).
func TestGroupsGraph(t *testing.T) {
	for name, want := range map[string][]string{
		"graph_earliest.h5": {"/", "/a", "/a/s2", "/g"},
		"graph_latest.h5":   {"/", "/a", "/a/s2", "/g"},
		"loops.h5":          {"/", "/a", "/g"},
	} {
		f, err := Open("../../../../internal/hdf5/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Groups()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
		f.Close()
	}
	f, err := Open("../../../../internal/hdf5/testdata/deep_earliest.h5")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := f.Groups(); err != nil || len(got) != 61 {
		t.Errorf("deep_earliest.h5: %d groups, %v; want the root and 60 nested", len(got), err)
	}
}

// TestGroupsWith lists the groups that have an attribute, each once, the root first: none in
// graph_latest.h5 (whose groups link back to the root); three in a file written here; one at
// the bottom of a chain of 20000 nested groups, found in time and memory that follow the
// file's size (before, Binsparse's detection built and looked up every group's path: d^2).
func TestGroupsWith(t *testing.T) {
	f, err := Open("../../../../internal/hdf5/testdata/graph_latest.h5")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if gs, err := f.GroupsWith("binsparse"); err != nil || len(gs) != 0 {
		t.Errorf("graph_latest.h5: %q, %v", gs, err)
	}
	name := t.TempDir() + "/w.h5"
	w, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"/", "/b/c", "/a"} {
		if err := w.SetAttr(g, "binsparse", "{}"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetAttr("/b", "other", "x"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if gs, err := r.GroupsWith("binsparse"); err != nil || !reflect.DeepEqual(gs, []string{"/", "/a", "/b/c"}) {
		t.Errorf("%q, %v", gs, err)
	}
}

func TestGroupsWithDeep(t *testing.T) {
	name := t.TempDir() + "/deep.h5"
	w, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Repeat("/d", 20000)
	if err := w.SetAttr(path, "binsparse", "{}"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if gs, err := r.GroupsWith("binsparse"); err != nil || len(gs) != 1 || gs[0] != path {
		t.Errorf("%d groups, %v", len(gs), err)
	}
}
