package mtx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// bigText returns a real general coordinate file of n entries, sorted or shuffled.
func bigText(n int, shuffled bool) []byte {
	r := rand.New(rand.NewSource(9))
	type e struct {
		i, j int
		v    float64
	}
	es := make([]e, n)
	for k := range es {
		es[k] = e{k/7 + 1, k%7*3 + 1, float64(r.Intn(1000)) / 8}
	}
	if shuffled {
		r.Shuffle(n, func(a, b int) { es[a], es[b] = es[b], es[a] })
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n/7+1, 21, n)
	for _, x := range es {
		fmt.Fprintf(&b, "%d %d %g\n", x.i, x.j, x.v)
	}
	return b.Bytes()
}

func TestParallelMatchesSequential(t *testing.T) {
	// Four threads whatever the machine: the pieces are scheduler tasks.
	ctx := sched.WithContext(context.Background(), sched.New(4, 0))
	for _, shuffled := range []bool{false, true} {
		data := bigText(3*parallelMin, shuffled)
		par, _, err := parse(ctx, data, "p.mtx", false)
		if err != nil {
			t.Fatal(err)
		}
		seq, _, err := parse(context.Background(), data, "s.mtx", false)
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range seq.Arrays {
			if !reflect.DeepEqual(par.Arrays[name], b) {
				t.Errorf("shuffled %v: array %s differs", shuffled, name)
			}
		}
		if err := par.Validate(); err != nil {
			t.Error(err)
		}
	}
	// An error late in the file is reported at its line by the parallel reader too.
	data := bigText(3*parallelMin, false)
	at := bytes.LastIndex(data[:len(data)-1], []byte("\n")) + 1
	bad := append(append([]byte(nil), data[:at]...), []byte("1 1 x\n")...)
	_, _, err := parse(ctx, bad, "bad.mtx", false)
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.Line != 3*parallelMin+2 {
		t.Errorf("err = %v, want line %d", err, 3*parallelMin+2)
	}
}
