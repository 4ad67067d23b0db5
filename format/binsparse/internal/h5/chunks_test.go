//go:build cgo && hdf5

package h5

import (
	"bytes"
	"testing"
)

func TestShuffle(t *testing.T) {
	for _, size := range []int{1, 2, 4, 8} {
		src := make([]byte, 8*size+3) // a trailing partial element is stored as is
		for i := range src {
			src[i] = byte(i * 7)
		}
		sh := make([]byte, len(src))
		shuffle(sh, src, size)
		if size == 4 && (sh[0] != src[0] || sh[1] != src[4] || sh[8] != src[1]) {
			t.Errorf("size 4: shuffled %v", sh[:12])
		}
		back := make([]byte, len(src))
		unshuffle(back, sh, size)
		if !bytes.Equal(back, src) {
			t.Errorf("size %d: unshuffle(shuffle(x)) != x", size)
		}
	}
}
