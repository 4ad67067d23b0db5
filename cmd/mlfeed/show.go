package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/render"
)

func init() {
	var in inputFlags
	var limit, cols, scale int
	var stream, pngOut string
	cmd := &cobra.Command{
		Use:   "show [flags] FILE...",
		Short: "Draw image samples (MNIST digits) as terminal art or a PNG grid",
		Long: `show draws the first records of an image stream (a [H W] shape, or a square dimension
such as 784) as text: '.' for 0, 'o' below 64, 'O' below 128, '@' otherwise, with the values of
the other small streams (labels) beside each. --png writes the first N records as one grid
image instead.`,
		Example: `  mlfeed show -n 2 t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed show --png digits.png -n 100 train-images-idx3-ubyte.gz`,
		Args: filesArgs(&in, 1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if cmd.Flags().Changed("lines") {
				least := int64(0)
				if pngOut != "" {
					least = 1 // a grid of no images is no picture
				}
				if err := checkRange("-n", int64(limit), least, math.MaxInt32); err != nil {
					return err
				}
			}
			if err := checkRange("--scale", int64(scale), 1, maxScale); err != nil {
				return err
			}
			if err := checkRange("--cols", int64(cols), 1, maxCols); err != nil {
				return err
			}
			src, err := in.open(args)
			if err != nil {
				return err
			}
			defer closer.Into(src, &err)
			n := limit
			if n < 0 {
				n = 3
				if pngOut != "" {
					n = 100
				}
			}
			return show(cmd.Context(), cmd.OutOrStdout(), src, stream, n, pngOut, cols, scale)
		},
	}
	in.register(cmd)
	f := cmd.Flags()
	f.IntVarP(&limit, "lines", "n", -1, "number of records (default 3, or 100 with --png)")
	f.StringVar(&stream, "stream", "", "the image stream `NAME` (default: the first that looks like images)")
	f.StringVar(&pngOut, "png", "", "write a grid of the records to `FILE` as PNG (-: standard output)")
	f.IntVar(&cols, "cols", 10, "images per row in the PNG grid")
	f.IntVar(&scale, "scale", 2, "pixel scale of the PNG grid")
	rootCmd.AddCommand(cmd)
}

// Limits of show --png: the grid is one image in memory.
const (
	maxScale     = 64
	maxCols      = 1000
	maxPNGPixels = 1 << 28
)

// gridPixels returns the number of pixels of the PNG grid of n images of h x w (as
// render.GridPNG lays them out), or a usage error above maxPNGPixels.
func gridPixels(n int64, h, w, cols, scale int) error {
	c := min(int64(cols), max(n, 1))
	rows := (max(n, 1) + c - 1) / c
	width := c*(int64(w)*int64(scale)+2) + 2
	height := rows*(int64(h)*int64(scale)+2) + 2
	if float64(width)*float64(height) > maxPNGPixels {
		return usageErr("the PNG grid of %d images of %dx%d at --scale %d, --cols %d would be %dx%d pixels, more than the limit of %d; lower -n, --cols or --scale",
			n, h, w, scale, cols, width, height, maxPNGPixels)
	}
	return nil
}

func show(ctx context.Context, w io.Writer, src mlfeed.Source, stream string, n int, pngOut string, cols, scale int) error {
	sc := src.Schema()
	idx := -1
	var h, wd int
	for i := range sc.Streams {
		if stream != "" && sc.Streams[i].Name != stream {
			continue
		}
		if hh, ww, ok := render.ImageShape(&sc.Streams[i]); ok {
			idx, h, wd = i, hh, ww
			break
		}
	}
	if idx < 0 {
		if stream != "" {
			return usageErr("stream %q is not an image stream (dense, numeric, shape [H W] or a square dimension)", stream)
		}
		return usageErr("no stream looks like images (dense, numeric, shape [H W] or a square dimension)")
	}
	st := &sc.Streams[idx]
	if pngOut != "" {
		seqs, _ := mlfeed.Totals(src.Chunks())
		if err := gridPixels(min(int64(n), seqs), h, wd, cols, scale); err != nil {
			return err
		}
	}
	var imgs []render.Image
	rec := 0
	err := eachSequence(ctx, src, int64(n), func(c *mlfeed.Chunk, q int) error {
		d := &c.Streams[idx]
		for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
			img := render.ImageOf(st, d, s, h, wd)
			if pngOut != "" {
				imgs = append(imgs, img)
				continue
			}
			fmt.Fprintf(w, "record %d%s\n%s\n", rec, labelText(&sc, c, q, idx), img.Art())
		}
		rec++
		return nil
	})
	if err != nil || pngOut == "" {
		return err
	}
	f, err := createOutput(pngOut)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := render.GridPNG(f, imgs, cols, scale); err != nil {
		return f.Err(fmt.Errorf("%s: %w", pngOut, err))
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if pngOut != "-" {
		fmt.Fprintf(w, "wrote %d images to %s\n", len(imgs), pngOut)
	}
	return nil
}

// labelText lists the small streams' values of sequence q: ", labels 7".
func labelText(sc *mlfeed.Schema, c *mlfeed.Chunk, q, skip int) string {
	var parts []string
	for i := range sc.Streams {
		st := &sc.Streams[i]
		if i == skip || st.Storage != mlfeed.Dense || st.Dim == 0 || st.Dim > 10 {
			continue
		}
		d := &c.Streams[i]
		v := inspect.AppendSamples(nil, st, d, q)
		if st.Dim == 1 && d.SeqStart[q+1]-d.SeqStart[q] == 1 {
			v = inspect.AppendValue(nil, d.Values, int(d.SeqStart[q]))
		}
		parts = append(parts, st.Name+" "+string(v))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}
