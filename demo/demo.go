// Package demo generates mlfeed's built-in demo data set: MNIST-like 28×28 images of
// handwritten-looking digits and their labels, drawn deterministically from a seed, so the demo
// runs offline with no download.
package demo

import (
	"math"
	"math/rand/v2"

	"github.com/mlfeed/mlfeed"
)

// Side is the width and height of an image.
const Side = 28

// glyphs are 5×7 bitmaps of the digits 0-9, one string per row.
var glyphs = [10][7]string{
	{".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	{"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	{".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	{"####.", "....#", "....#", ".###.", "....#", "....#", "####."},
	{"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	{"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	{"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	{"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	{".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	{".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
}

// Digits returns n images (n×28×28 bytes, row-major, 0 background to 255 ink) and n labels
// (0-9), the same for the same seed on every machine. Each image is its label's glyph drawn
// with a random size, position, slant and stroke width.
func Digits(n int, seed uint64) (images, labels []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x6d6c66656564)) // "mlfeed"
	images = make([]byte, n*Side*Side)
	labels = make([]byte, n)
	for i := 0; i < n; i++ {
		d := rng.IntN(10)
		labels[i] = byte(d)
		draw(images[i*Side*Side:(i+1)*Side*Side], d, rng)
	}
	return images, labels
}

// draw renders glyph d into img by sampling, for every pixel, the distance to the glyph's
// inked cells under a random affine transform.
func draw(img []byte, d int, rng *rand.Rand) {
	cell := 2.1 + 0.5*rng.Float64()       // pixels per glyph cell
	slant := 0.25 * (rng.Float64() - 0.5) // shear
	width := 0.35 + 0.3*rng.Float64()     // stroke half-width in cells
	cx := 14 + 2*(rng.Float64()-0.5)      // centre
	cy := 14 + 2*(rng.Float64()-0.5)      //
	rot := 0.2 * (rng.Float64() - 0.5)    // rotation in radians
	sin, cos := math.Sincos(rot)
	for y := 0; y < Side; y++ {
		for x := 0; x < Side; x++ {
			// Pixel centre into glyph coordinates (column u in 0..5, row v in 0..7).
			px, py := float64(x)+0.5-cx, float64(y)+0.5-cy
			px, py = px*cos-py*sin, px*sin+py*cos
			v := py/cell + 3.5
			u := (px-slant*py)/cell + 2.5
			best := math.Inf(1)
			for r := 0; r < 7; r++ {
				for c := 0; c < 5; c++ {
					if glyphs[d][r][c] != '#' {
						continue
					}
					du, dv := u-(float64(c)+0.5), v-(float64(r)+0.5)
					best = min(best, math.Hypot(du, dv))
				}
			}
			ink := 1 - (best-width)/0.6
			ink = max(0, min(1, ink))
			img[y*Side+x] = byte(math.Round(255 * ink))
		}
	}
}

// Source returns n generated digits as an in-memory source with two streams: "features"
// (uint8, 28×28) and "labels" (uint8, one value), one record per sequence, in chunks of at
// most 1000 records.
func Source(n int, seed uint64) *mlfeed.MemorySource {
	images, labels := Digits(n, seed)
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Type: mlfeed.Uint8, Dim: Side * Side, Shape: []int{Side, Side}},
		{Name: "labels", Type: mlfeed.Uint8, Dim: 1},
	}}
	var chunks []*mlfeed.Chunk
	for from := 0; from < n; from += 1000 {
		to := min(n, from+1000)
		seq := make([]int64, to-from+1)
		for k := range seq {
			seq[k] = int64(k)
		}
		chunks = append(chunks, &mlfeed.Chunk{Sequences: to - from, Streams: []mlfeed.StreamData{
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: images[from*Side*Side : to*Side*Side]}},
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: labels[from:to]}},
		}})
	}
	src, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		panic(err) // the chunks are built above to fit the schema
	}
	return src
}
