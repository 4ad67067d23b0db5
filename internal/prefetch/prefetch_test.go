package prefetch

import (
	"math/rand/v2"
	"testing"
)

func TestBytes(t *testing.T) {
	b := []byte{1, 2, 3}
	Bytes(b)
	Bytes(b[3:])
	Bytes(nil)
	if b[0] != 1 || b[1] != 2 || b[2] != 3 {
		t.Fatal("prefetching changed memory")
	}
}

// BenchmarkGather copies 3136-byte rows (an MNIST image as float32) from random places of a
// 188 MB array, with and without prefetching the row four copies ahead.
func BenchmarkGather(b *testing.B) {
	const rows, size, ahead = 60000, 3136, 4
	src := make([]byte, rows*size)
	for i := range src {
		src[i] = byte(i)
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(rows)
	dst := make([]byte, 256*size)
	for _, pf := range []bool{false, true} {
		name := "plain"
		if pf {
			name = "prefetch"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(rows * size)
			for b.Loop() {
				for k, i := range order {
					if pf && k+ahead < rows {
						Bytes(src[order[k+ahead]*size:])
					}
					copy(dst[k%256*size:][:size], src[i*size:])
				}
			}
		})
	}
}
