package h5

import (
	"reflect"
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
