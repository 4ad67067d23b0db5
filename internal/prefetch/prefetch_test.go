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

func TestSpan(t *testing.T) {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i * 7)
	}
	for off := range 130 {
		for _, n := range []int{0, 1, 2, 63, 64, 65, 127, 128, 129, 3136, 4096 - off} {
			if off+n <= len(b) {
				Span(b[off : off+n])
			}
		}
	}
	Span(nil)
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("prefetching changed byte %d", i)
		}
	}
}

// BenchmarkGather copies 3136-byte rows (an MNIST image as float32) from random places of a
// 188 MB array: without prefetching, prefetching the row four copies ahead ("prefetch"), and
// that and every line of the next row ("span"), as the minibatch engine's packers do.
func BenchmarkGather(b *testing.B) {
	const rows, size, ahead = 60000, 3136, 4
	src := make([]byte, rows*size)
	for i := range src {
		src[i] = byte(i)
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(rows)
	dst := make([]byte, 256*size)
	for _, name := range []string{"plain", "prefetch", "span"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(rows * size)
			for b.Loop() {
				for k, i := range order {
					if name != "plain" && k+ahead < rows {
						Bytes(src[order[k+ahead]*size:])
					}
					if name == "span" && k+1 < rows {
						Span(src[order[k+1]*size:][:size])
					}
					copy(dst[k%256*size:][:size], src[i*size:])
				}
			}
		})
	}
}
