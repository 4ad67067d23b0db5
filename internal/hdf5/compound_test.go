package hdf5

import (
	"encoding/binary"
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
			"name": {Offset: 75, Size: 5, Type: Datatype{Class: String, Size: 5, Pad: PadNull}},
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

// compoundMsg builds a compound datatype message of the given version and record size from
// members already encoded.
func compoundMsg(version byte, size uint32, members ...[]byte) []byte {
	b := []byte{version<<4 | 6, byte(len(members)), byte(len(members) >> 8), 0}
	b = binary.LittleEndian.AppendUint32(b, size)
	for _, m := range members {
		b = append(b, m...)
	}
	return b
}

var (
	msgInt32   = []byte{0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0}
	msgInt8    = []byte{0x10, 0x08, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0}
	msgFloat64 = []byte{0x11, 0x20, 63, 0, 8, 0, 0, 0, 0, 0, 64, 0, 52, 11, 0, 52, 0xff, 3, 0, 0}
)

// TestCompoundEncodings decodes compound datatype messages built by hand: version 1's array
// dimensions in the member (HDF5 before 1.4 wrote them; no file at hand has one), version 3's
// offsets of 2 bytes for records of 256 bytes or more, and the errors of a malformed message.
func TestCompoundEncodings(t *testing.T) {
	f := &File{name: "t.h5", size: 1 << 20}
	v1 := func(name string, off uint32, dims ...uint32) []byte {
		b := append([]byte(name), make([]byte, pad8(len(name)+1)-len(name))...)
		b = binary.LittleEndian.AppendUint32(b, off)
		b = append(b, byte(len(dims)), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		for k := range 4 {
			d := uint32(0)
			if k < len(dims) {
				d = dims[k]
			}
			b = binary.LittleEndian.AppendUint32(b, d)
		}
		return b
	}
	typ, err := f.parseDatatype(compoundMsg(1, 28, append(v1("vec", 0, 3), msgFloat64...), append(v1("n", 24), msgInt32...)), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{
		{Name: "vec", Offset: 0, Size: 24, Type: Datatype{Class: Float, Size: 8}, Dims: []uint64{3}},
		{Name: "n", Offset: 24, Size: 4, Type: Datatype{Class: Integer, Size: 4, Signed: true}},
	}
	if !reflect.DeepEqual(typ.Members, want) || typ.Size != 28 {
		t.Errorf("version 1: %+v", typ)
	}
	v3 := func(name string, off uint16) []byte {
		return binary.LittleEndian.AppendUint16(append([]byte(name), 0), off)
	}
	typ, err = f.parseDatatype(compoundMsg(3, 300, append(v3("x", 280), msgInt8...), append(v3("y", 4), msgInt32...)), 100)
	if err != nil || len(typ.Members) != 2 || typ.Members[0].Offset != 280 || typ.Members[1].Offset != 4 || typ.Members[1].Size != 4 {
		t.Errorf("version 3: %+v, %v", typ, err)
	}
	for what, msg := range map[string][]byte{
		"past the record": compoundMsg(3, 300, append(v3("x", 298), msgInt32...)),
		"two names":       compoundMsg(3, 300, append(v3("x", 0), msgInt8...), append(v3("x", 1), msgInt8...)),
		"short":           compoundMsg(3, 300, append(v3("x", 0), msgInt32[:10]...)),
		"no NUL":          compoundMsg(2, 8, []byte("abc")),
		"rank 5":          compoundMsg(1, 28, append(v1("vec", 0, 1, 1, 1, 1, 1), msgFloat64...)),
		"array too big":   compoundMsg(1, 28, append(v1("vec", 0, 4), msgFloat64...)),
	} {
		if what == "rank 5" { // v1 has room for 4 dimensions: forge the rank byte
			msg[8+8+4] = 5
		}
		if _, err := f.parseDatatype(msg, 100); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", what, err)
		}
	}
	// a nested compound member is kept, left out (Err), with its place in the record
	inner := compoundMsg(3, 4, append(v3("a", 0), msgInt32...))
	inner = append(inner[:10], inner[11:]...) // v3 offsets of 1 byte for a 4-byte record
	typ, err = f.parseDatatype(compoundMsg(3, 300, append(v3("in", 8), inner...)), 100)
	if err != nil || len(typ.Members) != 1 || !errors.Is(typ.Members[0].Err, ErrUnsupported) || typ.Members[0].Size != 4 {
		t.Errorf("nested: %+v, %v", typ, err)
	}
}
