package npy

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// AppendC converts a Fortran-order big-endian array to C order, little-endian, and refuses
// short data and unicode arrays.
func TestAppendC(t *testing.T) {
	dict := "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }"
	b := append([]byte(Magic), 1, 0, byte(len(dict)+1), 0)
	b = append(append(b, dict...), '\n')
	// Element (i, j) = 10*i + j, stored with the first axis varying fastest.
	for j := range 3 {
		for i := range 2 {
			b = binary.BigEndian.AppendUint16(b, uint16(10*i+j))
		}
	}
	h, err := ParseHeader(b, "x.npy")
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.AppendC([]byte{9}, b[h.DataOffset:])
	if err != nil {
		t.Fatal(err)
	}
	got := mlfeed.Buffer{Type: mlfeed.Int16, Bytes: append([]byte(nil), out[1:]...)}.Int16s()
	if out[0] != 9 || !reflect.DeepEqual(got, []int16{0, 1, 2, 10, 11, 12}) {
		t.Errorf("got %v", got)
	}
	if _, err := h.AppendC(nil, b[h.DataOffset:len(b)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short data: %v", err)
	}
	u := &Header{Descr: "<U2", Type: mlfeed.String}
	if _, err := u.AppendC(nil, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unicode: %v", err)
	}
}
