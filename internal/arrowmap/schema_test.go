package arrowmap

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mlfeed/mlfeed"
)

func field(name string, dt arrow.DataType, kv ...string) arrow.Field {
	var k, v []string
	for i := 0; i+1 < len(kv); i += 2 {
		k, v = append(k, kv[i]), append(v, kv[i+1])
	}
	return arrow.Field{Name: name, Type: dt, Metadata: arrow.NewMetadata(k, v)}
}

// TestPlanOtherWriters maps columns as other writers make them.
func TestPlanOtherWriters(t *testing.T) {
	f32 := arrow.PrimitiveTypes.Float32
	cases := []struct {
		f        arrow.Field
		variable bool
		want     string // the stream, or "" for an error
		err      error
		seq      bool
	}{
		{f: field("x", f32), want: "x dense float32 1"},
		{f: field("v", arrow.FixedSizeListOf(6, f32), ExtName, TensorExt, ExtMeta, `{"shape":[2,3]}`), want: "v dense float32 2x3"},
		{f: field("v", arrow.FixedSizeListOf(6, f32), ExtName, TensorExt, ExtMeta, `{"shape":[2,3],"permutation":[1,0]}`), err: ErrUnsupported},
		{f: field("v", arrow.FixedSizeListOf(6, f32), ExtName, TensorExt, ExtMeta, `{"shape":[4,3]}`), err: ErrFormat},
		{f: field("l", arrow.ListOf(f32)), want: "l dense float32 variable"}, // dim learned later
		{f: field("l", arrow.ListOf(f32)), variable: true, want: "l dense float32 variable"},
		{f: field("l", arrow.LargeListOf(f32), KeyDim, "4"), want: "l dense float32 4"},
		{f: field("s", arrow.ListOf(arrow.FixedSizeListOf(2, f32))), want: "s dense float32 2", seq: true},
		{f: field("d", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}), want: "d dense string 1"},
		{f: field("t", arrow.FixedWidthTypes.Timestamp_us), want: "t dense datetime 1"},
		{f: field("t", arrow.ListOf(arrow.FixedWidthTypes.Time32ms)), variable: true, want: "t dense duration variable"},
		{f: field("m", &arrow.Decimal128Type{Precision: 9, Scale: 2}), err: ErrUnsupported},
		{f: field("x", f32, KeyDim, "3"), err: ErrFormat},
		{f: field("x", f32, KeyType, "float64"), err: ErrFormat},
		{f: field("x", f32, KeyType, "nonsense"), err: ErrFormat},
		{f: field("x", f32, KeyMetadata, "[{"), err: ErrFormat},
		{f: field("x", arrow.FixedSizeListOf(2, f32), KeyShape, "3,1"), err: ErrFormat},
	}
	for _, c := range cases {
		p, err := NewPlan(arrow.NewSchema([]arrow.Field{c.f}, nil), c.variable, nil, nil)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%v: got %v, want %v", c.f, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.f, err)
			continue
		}
		if got := p.Schema.Streams[0].String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.f, got, c.want)
		}
		if p.Columns[0].Seq != c.seq {
			t.Errorf("%v: seq %v", c.f, p.Columns[0].Seq)
		}
		if learn := len(p.NeedsDim()) > 0; learn != (c.f.Name == "l" && !c.variable && c.f.Metadata.Len() == 0) {
			t.Errorf("%v: needs dim %v", c.f, learn)
		}
	}
}

// TestFieldRoundTrip maps every element type and layout to a field and back.
func TestFieldRoundTrip(t *testing.T) {
	for typ := mlfeed.Float32; typ <= mlfeed.RowID; typ++ {
		for _, st := range []mlfeed.Stream{
			{Name: "a", Type: typ, Dim: 1},
			{Name: "a", Type: typ, Dim: 3},
			{Name: "a", Type: typ, Dim: 6, Shape: []int{1, 2, 3}},
			{Name: "a", Type: typ},
			{Name: "a", Type: typ, Storage: mlfeed.Sparse, Dim: 9},
			{Name: "a", Type: typ, Dim: 0, Shape: []int{0, 4}},
		} {
			for _, seq := range []bool{false, true} {
				f, err := Field(&st, seq, "")
				if err != nil {
					t.Fatalf("%v: %v", st, err)
				}
				p, err := NewPlan(arrow.NewSchema([]arrow.Field{f}, nil), false, nil, nil)
				if err != nil {
					t.Fatalf("%v seq=%v: %v", st, seq, err)
				}
				if got := p.Schema.Streams[0]; got.String() != st.String() || p.Columns[0].Seq != seq {
					t.Errorf("%v seq=%v: became %v seq=%v", st, seq, got, p.Columns[0].Seq)
				}
			}
		}
	}
}
