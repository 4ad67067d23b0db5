// Package render draws image samples (MNIST digits and the like) as terminal art and as PNG
// grids, for `mlfeed show`.
package render

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Image is an 8-bit grayscale image: 0 is background, 255 full ink.
type Image struct {
	W, H int
	Pix  []uint8 // row-major, len W*H
}

// ImageShape returns the height and width of a stream's samples when they look like images:
// a shape of [H W] or [H W 1], or a square Dim without a shape (784 is 28×28).
func ImageShape(st *mlfeed.Stream) (h, w int, ok bool) {
	if st.Storage != mlfeed.Dense || !st.Type.IsNumeric() {
		return 0, 0, false
	}
	switch s := st.Shape; {
	case len(s) == 2 && s[0] > 0 && s[1] > 0:
		return s[0], s[1], true
	case len(s) == 3 && s[2] == 1 && s[0] > 0 && s[1] > 0:
		return s[0], s[1], true
	case s == nil && st.Dim > 1:
		r := int(math.Sqrt(float64(st.Dim)))
		if r*r == st.Dim && r >= 4 {
			return r, r, true
		}
	}
	return 0, 0, false
}

// ImageOf returns sample s of stream st as an image of h×w pixels. uint8 values are used as
// they are; other types are mapped to 0..255, from [0, 1] when every value lies there and
// clamped to [0, 255] otherwise.
func ImageOf(st *mlfeed.Stream, d *mlfeed.StreamData, s int64, h, w int) Image {
	from, _ := d.SampleRange(st, s)
	img := Image{W: w, H: h, Pix: make([]uint8, w*h)}
	if d.Values.Type == mlfeed.Uint8 {
		copy(img.Pix, d.Values.Bytes[from:from+w*h])
		return img
	}
	unit := true
	for k := 0; k < w*h; k++ {
		if v := d.Values.Float64At(from + k); v < 0 || v > 1 {
			unit = false
			break
		}
	}
	for k := range img.Pix {
		v := d.Values.Float64At(from + k)
		if unit {
			v *= 255
		}
		if math.IsNaN(v) {
			v = 0
		}
		img.Pix[k] = uint8(math.Round(max(0, min(255, v))))
	}
	return img
}

// Art renders the image as text, one character per pixel, as the classic MNIST write-up does:
// '.' for 0, 'o' below 64, 'O' below 128, '@' otherwise.
func (img Image) Art() string {
	var b strings.Builder
	b.Grow((img.W + 1) * img.H)
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			switch p := img.Pix[y*img.W+x]; {
			case p == 0:
				b.WriteByte('.')
			case p < 64:
				b.WriteByte('o')
			case p < 128:
				b.WriteByte('O')
			default:
				b.WriteByte('@')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// GridPNG writes the images as one PNG, cols per row with a 2-pixel gap, each pixel scaled by
// scale (≥ 1), ink drawn white on black as in MNIST. The images must share one size.
func GridPNG(out io.Writer, imgs []Image, cols, scale int) error {
	if len(imgs) == 0 {
		return fmt.Errorf("render: no images")
	}
	cols = max(1, min(cols, len(imgs)))
	scale = max(1, scale)
	rows := (len(imgs) + cols - 1) / cols
	const gap = 2
	cw, ch := imgs[0].W*scale+gap, imgs[0].H*scale+gap
	canvas := image.NewGray(image.Rect(0, 0, cols*cw+gap, rows*ch+gap))
	for i := range canvas.Pix {
		canvas.Pix[i] = 40 // the gaps, dark gray
	}
	for i, img := range imgs {
		if img.W != imgs[0].W || img.H != imgs[0].H {
			return fmt.Errorf("render: image %d is %dx%d, the first %dx%d", i, img.W, img.H, imgs[0].W, imgs[0].H)
		}
		ox, oy := gap+(i%cols)*cw, gap+(i/cols)*ch
		for y := 0; y < img.H*scale; y++ {
			for x := 0; x < img.W*scale; x++ {
				canvas.SetGray(ox+x, oy+y, color.Gray{Y: img.Pix[(y/scale)*img.W+x/scale]})
			}
		}
	}
	return png.Encode(out, canvas)
}
