package demo

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

func TestDeterministic(t *testing.T) {
	a, la := Digits(50, 1)
	b, lb := Digits(50, 1)
	if !bytes.Equal(a, b) || !bytes.Equal(la, lb) {
		t.Fatal("same seed, different data")
	}
	c, _ := Digits(50, 2)
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same data")
	}
	if sha256.Sum256(a) == sha256.Sum256(c) {
		t.Fatal("unexpected hash collision")
	}
}

func TestDigitsLookLikeDigits(t *testing.T) {
	imgs, labels := Digits(200, 7)
	var seen [10]int
	for i, l := range labels {
		if l > 9 {
			t.Fatalf("label %d", l)
		}
		seen[l]++
		img := imgs[i*Side*Side : (i+1)*Side*Side]
		ink := 0
		for _, p := range img {
			if p > 128 {
				ink++
			}
		}
		// A digit covers some but not most of the image, and stays off the border.
		if ink < 30 || ink > 400 {
			t.Errorf("image %d (%d): %d inked pixels", i, l, ink)
		}
		for k := 0; k < Side; k++ {
			if img[k] > 0 || img[(Side-1)*Side+k] > 0 || img[k*Side] > 0 || img[k*Side+Side-1] > 0 {
				t.Errorf("image %d touches the border", i)
				break
			}
		}
	}
	for d, n := range seen {
		if n == 0 {
			t.Errorf("digit %d never drawn in 200", d)
		}
	}
}
