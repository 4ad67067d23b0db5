package render

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/stats"
)

func TestChartsPNG(t *testing.T) {
	res := &stats.Result{Sequences: 3, Samples: 7,
		SequenceLengths: stats.Lengths{Min: 1, Max: 4, Mean: 2.3, Histogram: stats.Histogram{Edges: []float64{1, 2, 3, 4, 5}, Counts: []int64{1, 1, 0, 1}}},
		Streams: []stats.Stream{
			{Name: "x", Storage: "dense", Type: "float32", Numeric: &stats.Numeric{Min: -1, Max: 2,
				Histogram: stats.Histogram{Edges: []float64{-1, 0, 1, 2.5}, Counts: []int64{5, 0, 9}}}},
			{Name: "y", Storage: "dense", Type: "uint8", Numeric: &stats.Numeric{},
				Classes: &stats.Classes{Kind: "integer", Distinct: 2, Counts: []stats.ClassCount{{Class: 0, Count: 3}, {Class: 1, Count: 4}}}},
			{Name: "b", Storage: "dense", Type: "bytes", Bytes: &stats.Bytes{MediaTypes: []stats.MediaCount{{Type: "image/png", Count: 2}}}},
		}}
	charts := StatsCharts(res)
	var titles []string
	for _, c := range charts {
		titles = append(titles, c.Title)
	}
	want := []string{"sequence lengths", "x (dense float32): values", "y (dense uint8): classes (integer)",
		"b (dense bytes): size (bytes)", "b (dense bytes): media types"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Fatalf("charts %q, want %q", titles, want)
	}
	var buf bytes.Buffer
	if err := ChartsPNG(&buf, "test", charts); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// Three rows of two charts; the tallest bar of the first chart reaches the top of its plot.
	if b := img.Bounds(); b.Dx() != chartCols*chartW+3*chartMargin || b.Dy() != 40+3*(chartH+chartMargin)+chartMargin {
		t.Fatalf("size %v", b)
	}
	bars := 0
	for x := 0; x < chartW; x++ {
		if r, g, b, _ := img.At(chartMargin+x, 40+chartH-21).RGBA(); r>>8 == 0x3b && g>>8 == 0x6e && b>>8 == 0xa5 {
			bars++
		}
	}
	if bars == 0 {
		t.Error("no bar drawn at the foot of the first chart")
	}
}
