package render

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

func TestArtThresholds(t *testing.T) {
	img := Image{W: 4, H: 2, Pix: []uint8{0, 1, 63, 64, 127, 128, 255, 0}}
	if got, want := img.Art(), ".ooO\nO@@.\n"; got != want {
		t.Fatalf("art %q, want %q", got, want)
	}
}

func TestImageShapeAndScaling(t *testing.T) {
	st := mlfeed.Stream{Name: "x", Type: mlfeed.Float32, Dim: 16}
	h, w, ok := ImageShape(&st)
	if !ok || h != 4 || w != 4 {
		t.Fatalf("shape %d %d %v", h, w, ok)
	}
	if _, _, ok := ImageShape(&mlfeed.Stream{Type: mlfeed.Float32, Dim: 10}); ok {
		t.Fatal("dim 10 is not an image")
	}
	vals := mlfeed.NewBuffer(mlfeed.Float32, 16)
	vals.SetFloat64(0, 1)
	vals.SetFloat64(1, 0.5)
	d := mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: vals}
	img := ImageOf(&st, &d, 0, 4, 4)
	if img.Pix[0] != 255 || img.Pix[1] != 128 || img.Pix[2] != 0 {
		t.Fatalf("unit-range floats scaled to %v", img.Pix[:3])
	}
}

func TestGridPNG(t *testing.T) {
	imgs := []Image{{W: 2, H: 2, Pix: []uint8{255, 0, 0, 255}}, {W: 2, H: 2, Pix: []uint8{0, 0, 0, 0}}, {W: 2, H: 2, Pix: []uint8{9, 9, 9, 9}}}
	var buf bytes.Buffer
	if err := GridPNG(&buf, imgs, 2, 3); err != nil {
		t.Fatal(err)
	}
	p, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 2 columns of 6+2 px plus a 2 px border; 2 rows.
	if b := p.Bounds(); b.Dx() != 18 || b.Dy() != 18 {
		t.Fatalf("bounds %v", b)
	}
	if r, _, _, _ := p.At(2, 2).RGBA(); r>>8 != 255 {
		t.Errorf("top-left pixel of the first image is %d, want 255", r>>8)
	}
	if err := GridPNG(&buf, []Image{{W: 1, H: 1, Pix: []uint8{0}}, {W: 2, H: 1, Pix: []uint8{0, 0}}}, 2, 1); err == nil || !strings.Contains(err.Error(), "image 1") {
		t.Errorf("mixed sizes: %v", err)
	}
}
