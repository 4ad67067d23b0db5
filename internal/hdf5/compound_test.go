package hdf5

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

// TestCompoundMembers decodes the compound datatypes h5py wrote with libver earliest (datatype
// messages of version 1, or 2 with array members) and latest (version 3): members' names,
// offsets, sizes, types and array dimensions, and the members left out.
func TestCompoundMembers(t *testing.T) {
	for file, versions := range map[string][2]byte{"types_earliest.h5": {2, 1}, "types_latest.h5": {3, 3}} {
		fh, err := os.Open("testdata/compound/" + file)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := fh.Stat()
		f, err := NewFile(fh, st.Size(), file)
		if err != nil {
			t.Fatal(err)
		}
		for i, path := range []string{"rec", "grid"} {
			o, err := f.Get(path)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := o.o.find(msgDatatype)
			if v := m.data[0] >> 4; v != versions[i] {
				t.Errorf("%s %s: datatype message version %d, want %d", file, path, v, versions[i])
			}
		}
		o, _ := f.Get("rec")
		d, err := o.Dataset()
		if err != nil {
			t.Fatal(err)
		}
		if d.Type.Class != Compound || d.Type.Size != 137 || len(d.Type.Members) != 25 {
			t.Fatalf("%s: %v", file, d.Type)
		}
		got := map[string]Member{}
		for _, m := range d.Type.Members {
			got[m.Name] = m
		}
		for name, want := range map[string]Member{
			"i1":   {Offset: 0, Size: 1, Type: Datatype{Class: Integer, Size: 1, Signed: true}},
			"bu4":  {Offset: 32, Size: 4, Type: Datatype{Class: Integer, Size: 4, BigEndian: true}},
			"bf2":  {Offset: 58, Size: 2, Type: Datatype{Class: Float, Size: 2, BigEndian: true, Half: true}},
			"flag": {Offset: 72, Size: 1, Type: Datatype{Class: Integer, Size: 1, Signed: true, Enum: true, Bool: true}},
			"name": {Offset: 75, Size: 5, Type: Datatype{Class: String, Size: 5}},
			"vec":  {Offset: 80, Size: 24, Type: Datatype{Class: Float, Size: 8}, Dims: []uint64{3}},
			"mat":  {Offset: 104, Size: 8, Type: Datatype{Class: Integer, Size: 2, Signed: true}, Dims: []uint64{2, 2}},
		} {
			m := got[name]
			m.Name, want.Name = "", ""
			if m.Err != nil || !reflect.DeepEqual(m, want) {
				t.Errorf("%s %s: %+v, want %+v", file, name, m, want)
			}
		}
		for _, name := range []string{"pt", "vs"} {
			if m := got[name]; !errors.Is(m.Err, ErrUnsupported) || m.Size == 0 {
				t.Errorf("%s %s: %+v", file, name, m)
			}
		}
		fh.Close()
	}
}
