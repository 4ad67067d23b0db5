package libsvm

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader reads arbitrary text as LIBSVM: an error naming a line, or records that write
// back and read again (with the same base, label kind and dimension) to the same values.
func FuzzReader(f *testing.F) {
	testutil.Seed(f, filepath.Join("testdata", "*.svm"))
	f.Add([]byte("1 qid:3 1:0.5 7:nan # c\n\n-2 2:1e308 3:-0\n"))
	f.Add([]byte("1,3 0:1\n 2:5\n"))
	f.Add([]byte("nan(0x8000000000001) 1:-nan 2:nan(0x1) 3:NaN 4:-nan(0xfffffffffffff)\n")) // NaN payloads
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReaderBytes(data, &ReaderOptions{ChunkSize: 64})
		if err != nil {
			return
		}
		recs, err := records(rd)
		if err != nil {
			if _, ok := err.(*mlfeed.PosError); !ok {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, rd.Schema(), &WriterOptions{ZeroBased: rd.Base() == BaseZero})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rd.Chunks() {
			c, _ := rd.ReadChunk(context.Background(), i)
			if err := w.WriteChunk(c); err != nil {
				t.Fatalf("writing back: %v", err)
			}
		}
		w.Close()
		opts := &ReaderOptions{Base: rd.Base(), Dim: rd.dim, Labels: LabelsSingle}
		if rd.multi {
			opts.Labels = LabelsMulti
		} else if !rd.hasLabels {
			opts.Labels = LabelsAuto
		}
		again, err := NewReaderBytes(buf.Bytes(), opts)
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.Bytes(), err)
		}
		recs2, err := records(again)
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.Bytes(), err)
		}
		if !reflect.DeepEqual(rd.Schema().Streams[len(rd.Schema().Streams)-1].Name, again.Schema().Streams[len(again.Schema().Streams)-1].Name) ||
			!reflect.DeepEqual(recs, recs2) {
			t.Fatalf("round trip changed the records:\n%v\n%v\ntext %q", recs, recs2, buf.Bytes())
		}
	})
}

// records returns every record as strings of its streams' indices and value bits.
func records(rd *Reader) ([][]any, error) {
	var out [][]any
	sc := rd.Schema()
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			return nil, err
		}
		if err := c.Validate(&sc); err != nil {
			return nil, err
		}
		for q := 0; q < c.Sequences; q++ {
			var r []any
			for k := range sc.Streams {
				d := &c.Streams[k]
				from, to := d.SampleRange(&sc.Streams[k], int64(q))
				for j := from; j < to; j++ {
					if d.Indices != nil {
						r = append(r, d.Indices[j])
					}
					if d.Values.Type == mlfeed.Int64 {
						r = append(r, d.Values.Int64At(j))
					} else {
						r = append(r, math.Float64bits(d.Values.Float64At(j)))
					}
				}
				r = append(r, "|")
			}
			out = append(out, r)
		}
	}
	return out, nil
}
