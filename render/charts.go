package render

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/mlfeed/mlfeed/stats"
)

// Bar is one bar of a chart: its label under the axis (may be empty) and its height.
type Bar struct {
	Label string
	Value int64
}

// Chart is a bar chart: a title, a subtitle of figures, and bars drawn left to right.
type Chart struct {
	Title, Subtitle string
	Bars            []Bar
}

// Sizes of the charts image, in pixels.
const (
	chartW, chartH = 560, 250
	chartCols      = 2
	chartMargin    = 16
	maxChartBars   = 100
)

var (
	chartInk  = color.RGBA{0x20, 0x20, 0x20, 0xff}
	chartGrey = color.RGBA{0x80, 0x80, 0x80, 0xff}
	chartBar  = color.RGBA{0x3b, 0x6e, 0xa5, 0xff}
	chartAxis = color.RGBA{0xc8, 0xc8, 0xc8, 0xff}
)

// ChartsPNG draws charts, two to a row under a heading, as one PNG image.
func ChartsPNG(out io.Writer, heading string, charts []Chart) error {
	rows := (len(charts) + chartCols - 1) / chartCols
	w := chartCols*chartW + (chartCols+1)*chartMargin
	h := 40 + rows*(chartH+chartMargin) + chartMargin
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	text(img, chartMargin, 24, heading, chartInk)
	for i := range charts {
		x := chartMargin + (i%chartCols)*(chartW+chartMargin)
		y := 40 + (i/chartCols)*(chartH+chartMargin)
		drawChart(img, image.Rect(x, y, x+chartW, y+chartH), &charts[i])
	}
	return png.Encode(out, img)
}

// drawChart draws c in r: title, subtitle, the largest value on the axis, the bars and the
// labels of the first, middle and last bar (or of every bar when they fit).
func drawChart(img *image.RGBA, r image.Rectangle, c *Chart) {
	text(img, r.Min.X, r.Min.Y+13, clip(c.Title, chartW/7), chartInk)
	text(img, r.Min.X, r.Min.Y+28, clip(c.Subtitle, chartW/7), chartGrey)
	var most int64
	for _, b := range c.Bars {
		most = max(most, b.Value)
	}
	mostLabel := strconv.FormatInt(most, 10)
	left := r.Min.X + 7*len(mostLabel) + 6
	plot := image.Rect(left, r.Min.Y+40, r.Max.X-4, r.Max.Y-20)
	text(img, r.Min.X, plot.Min.Y+10, mostLabel, chartGrey)
	text(img, r.Min.X+7*(len(mostLabel)-1), plot.Max.Y, "0", chartGrey)
	fill(img, image.Rect(plot.Min.X-1, plot.Min.Y, plot.Min.X, plot.Max.Y+1), chartAxis)
	fill(img, image.Rect(plot.Min.X-1, plot.Max.Y, plot.Max.X, plot.Max.Y+1), chartAxis)
	n := len(c.Bars)
	if n == 0 || most == 0 {
		text(img, plot.Min.X+8, plot.Min.Y+20, "(no values)", chartGrey)
		return
	}
	slot := float64(plot.Dx()) / float64(n)
	gap := 0
	if slot >= 4 {
		gap = 1
	}
	all := true
	for _, b := range c.Bars {
		if 7*len(b.Label)+4 > int(slot) {
			all = false
		}
	}
	for i, b := range c.Bars {
		x0 := plot.Min.X + int(float64(i)*slot)
		x1 := plot.Min.X + int(float64(i+1)*slot) - gap
		hgt := int(float64(plot.Dy()) * float64(b.Value) / float64(most))
		if b.Value > 0 && hgt == 0 {
			hgt = 1 // a bar that is there shows
		}
		fill(img, image.Rect(x0, plot.Max.Y-hgt, max(x1, x0+1), plot.Max.Y), chartBar)
		if all || i == 0 || i == n-1 || i == n/2 {
			lx := min(max(x0, r.Min.X), r.Max.X-7*len(b.Label))
			if !all && i == n-1 {
				lx = max(lx, x1-7*len(b.Label))
			}
			text(img, lx, r.Max.Y-4, b.Label, chartGrey)
		}
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// text writes s with its baseline at y, in a 7x13 pixel font.
func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// clip cuts s to n characters.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// StatsCharts returns the charts of a stats.Result: the sequence lengths when they vary, and
// for each stream its histogram, classes, non-zeros per sample, lengths, sizes and media types
// as they apply.
func StatsCharts(res *stats.Result) []Chart {
	var out []Chart
	if l := res.SequenceLengths; l.Min != l.Max {
		out = append(out, lengthsChart("sequence lengths", "", &l))
	}
	for i := range res.Streams {
		s := &res.Streams[i]
		name := fmt.Sprintf("%s (%s %s)", s.Name, s.Storage, s.Type)
		if n := s.Numeric; n != nil && (s.Classes == nil || s.Classes.Kind != "integer") {
			sub := fmt.Sprintf("min %s  max %s  mean %s  std %s", num(n.Min), num(n.Max), num(n.Mean), num(n.Std))
			if n.NaN+n.PosInf+n.NegInf > 0 {
				sub += fmt.Sprintf("  NaN %d  Inf %d", n.NaN, n.PosInf+n.NegInf)
			}
			out = append(out, Chart{Title: name + ": values", Subtitle: sub, Bars: histBars(&n.Histogram)})
		}
		if c := s.Classes; c != nil {
			ch := Chart{Title: fmt.Sprintf("%s: classes (%s)", name, c.Kind), Subtitle: fmt.Sprintf("%d distinct", c.Distinct)}
			for k, cc := range c.Counts {
				if k == maxChartBars {
					ch.Subtitle += fmt.Sprintf(", the first %d shown", maxChartBars)
					break
				}
				ch.Bars = append(ch.Bars, Bar{Label: strconv.FormatInt(cc.Class, 10), Value: cc.Count})
			}
			out = append(out, ch)
		}
		if sp := s.Sparse; sp != nil {
			out = append(out, lengthsChart(name+": non-zeros per sample", fmt.Sprintf("density %s", num(sp.Density)), &sp.NonZeros))
		}
		if l := s.ValuesPerSample; l != nil {
			out = append(out, lengthsChart(name+": values per sample", "", l))
		}
		if t := s.Text; t != nil {
			out = append(out, lengthsChart(name+": length (characters)", "", &t.Lengths))
		}
		if b := s.Bytes; b != nil {
			out = append(out, lengthsChart(name+": size (bytes)", "", &b.Sizes))
			ch := Chart{Title: name + ": media types"}
			for _, m := range b.MediaTypes {
				ch.Bars = append(ch.Bars, Bar{Label: m.Type, Value: m.Count})
			}
			out = append(out, ch)
		}
	}
	return out
}

func lengthsChart(title, sub string, l *stats.Lengths) Chart {
	if sub != "" {
		sub += "  "
	}
	sub += fmt.Sprintf("min %d  max %d  mean %s", l.Min, l.Max, num(l.Mean))
	return Chart{Title: title, Subtitle: sub, Bars: histBars(&l.Histogram)}
}

// histBars labels each bin with its lower edge.
func histBars(h *stats.Histogram) []Bar {
	bars := make([]Bar, len(h.Counts))
	for i, c := range h.Counts {
		bars[i] = Bar{Label: num(h.Edges[i]), Value: c}
	}
	return bars
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
