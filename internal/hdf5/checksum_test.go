package hdf5

import (
	"bytes"
	"errors"
	stdadler "hash/adler32"
	"math/rand"
	"testing"

	"github.com/klauspost/compress/zlib"

	"github.com/mlfeed/mlfeed"
)

// TestAdler32 compares adler32 with hash/adler32 on lengths around the reduction block and on
// all-0xff input (the largest sums).
func TestAdler32(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, n := range []int{0, 1, 7, 8, 9, 5551, 5552, 5553, 11104, 100000, 1 << 20} {
		b := make([]byte, n)
		r.Read(b)
		ff := bytes.Repeat([]byte{0xff}, n)
		for _, in := range [][]byte{b, ff} {
			if got, want := adler32(in), stdadler.Checksum(in); got != want {
				t.Errorf("%d bytes: %#x, want %#x", n, got, want)
			}
		}
	}
}

// TestInflate checks inflate on a good stream and on broken ones: every break is an error or
// a length other than the expected one.
func TestInflate(t *testing.T) {
	data := testData(mlfeed.Int16, 50000)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	good := z.Bytes()
	s := new(scratch)
	dst := make([]byte, len(data))
	if k, err := s.inflate(dst, good); err != nil || k != len(data) || !bytes.Equal(dst, data) {
		t.Fatalf("good stream: %d, %v", k, err)
	}
	if _, err := s.inflate(make([]byte, len(data)-1), good); !errors.Is(err, errOverrun) {
		t.Errorf("overrun: %v; want errOverrun", err)
	}
	for name, bad := range map[string][]byte{
		"checksum":  append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1),
		"truncated": good[:len(good)-3],
		"header":    append([]byte{0x78, 0x9d}, good[2:]...),
		"method":    append([]byte{0x79, 0x9c}, good[2:]...),
		"short":     good[:3],
	} {
		if k, err := s.inflate(dst, bad); err == nil && k == len(data) {
			t.Errorf("%s: accepted", name)
		}
	}
}
