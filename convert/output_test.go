package convert

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// writes records each Write's offset and length, and fails once it holds failAt bytes.
type writes struct {
	bytes.Buffer
	calls  [][2]int
	failAt int
}

var errFull = errors.New("disk full")

func (w *writes) Write(p []byte) (int, error) {
	if w.failAt > 0 && w.Len()+len(p) > w.failAt {
		return 0, errFull
	}
	w.calls = append(w.calls, [2]int{w.Len(), len(p)})
	return w.Buffer.Write(p)
}

// TestOutputPieces writes pieces of every size through an output: what arrives is what was
// written, in writes that start at multiples of hugeWrite and are whole multiples of it, but
// for the last.
func TestOutputPieces(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var want []byte
	rec := &writes{}
	o := &output{w: rec}
	for _, n := range []int{0, 1, 100, 64 << 10, hugeWrite - 1, hugeWrite, 3*hugeWrite + 5, 7, 2 * hugeWrite, 1} {
		p := make([]byte, n)
		rng.Read(p)
		want = append(want, p...)
		if k, err := o.Write(p); k != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, k, err)
		}
	}
	if err := o.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Bytes(), want) {
		t.Fatal("the bytes written differ")
	}
	for k, c := range rec.calls {
		if c[0]%hugeWrite != 0 || k < len(rec.calls)-1 && c[1]%hugeWrite != 0 {
			t.Errorf("write %d at offset %d of %d bytes: not in whole pieces", k, c[0], c[1])
		}
	}
	if len(rec.calls) < 5 {
		t.Errorf("%d writes", len(rec.calls))
	}
	var none *output
	if err := none.Flush(); err != nil {
		t.Errorf("Flush of no output: %v", err)
	}
}

// TestHugePieces: huge pieces only for outputs the engine gathers samples from straight out
// of the mapping (a RawSamples format, every stream dense).
func TestHugePieces(t *testing.T) {
	dense := mlfeed.Stream{Name: "x", Storage: mlfeed.Dense, Dim: 784, Type: mlfeed.Float32}
	sparse := mlfeed.Stream{Name: "y", Storage: mlfeed.Sparse, Dim: 10, Type: mlfeed.Float32}
	for _, c := range []struct {
		format  string
		streams []mlfeed.Stream
		want    bool
	}{
		{"idx", []mlfeed.Stream{dense}, true},
		{"cbf", []mlfeed.Stream{dense, dense}, true},
		{"cbf", []mlfeed.Stream{dense, sparse}, false},
		{"cbf", nil, false},
		{"ctf", []mlfeed.Stream{dense}, false},
	} {
		ft, ok := format.Lookup(c.format)
		if !ok {
			t.Fatalf("no format %q", c.format)
		}
		if got := hugePieces(ft, mlfeed.Schema{Streams: c.streams}); got != c.want {
			t.Errorf("%s with %d streams: huge pieces %v, want %v", c.format, len(c.streams), got, c.want)
		}
	}
}

// TestOutputError: the first error of the file is returned by the Write that met it, by every
// later Write and by Flush.
func TestOutputError(t *testing.T) {
	o := &output{w: &writes{failAt: hugeWrite + 10}}
	if _, err := o.Write(make([]byte, hugeWrite+100)); err != nil {
		t.Fatalf("first piece: %v", err)
	}
	if n, err := o.Write(make([]byte, hugeWrite)); !errors.Is(err, errFull) || n >= hugeWrite {
		t.Fatalf("Write past the disk's end = %d, %v", n, err)
	}
	if _, err := o.Write([]byte{1}); !errors.Is(err, errFull) {
		t.Errorf("Write after the error: %v", err)
	}
	if err := o.Flush(); !errors.Is(err, errFull) {
		t.Errorf("Flush after the error: %v", err)
	}
}
