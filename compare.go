package mlfeed

import (
	"context"
	"fmt"
	"math"
)

// Diff compares the data of two sources and returns nil when they hold the same sequences:
// the same number of streams (matched by position), sequences and samples, and the same
// values, compared as numbers (float64) for numeric types after expanding sparse samples, and
// exactly for other types. Element types, names and chunking may differ, so Diff checks a
// conversion for loss; it reports the first difference with its sequence and stream.
func Diff(ctx context.Context, a, b Source) error {
	sa, sb := a.Schema(), b.Schema()
	if len(sa.Streams) != len(sb.Streams) {
		return fmt.Errorf("mlfeed: %d streams vs %d", len(sa.Streams), len(sb.Streams))
	}
	ca, cb := &cursor{src: a}, &cursor{src: b}
	for seq := int64(0); ; seq++ {
		qa, oka, err := ca.next(ctx)
		if err != nil {
			return err
		}
		qb, okb, err := cb.next(ctx)
		if err != nil {
			return err
		}
		if oka != okb {
			return fmt.Errorf("mlfeed: one source ends after %d sequences, the other goes on", seq)
		}
		if !oka {
			return nil
		}
		for i := range sa.Streams {
			if err := diffSequence(&sa.Streams[i], &sb.Streams[i], &ca.c.Streams[i], &cb.c.Streams[i], qa, qb); err != nil {
				return fmt.Errorf("mlfeed: sequence %d, stream %q: %w", seq, sa.Streams[i].Name, err)
			}
		}
	}
}

// cursor walks the sequences of a source.
type cursor struct {
	src   Source
	chunk int
	c     *Chunk
	q     int
}

func (c *cursor) next(ctx context.Context) (int, bool, error) {
	for c.c == nil || c.q >= c.c.Sequences {
		if c.chunk >= len(c.src.Chunks()) {
			return 0, false, nil
		}
		var err error
		if c.c, err = c.src.ReadChunk(ctx, c.chunk); err != nil {
			return 0, false, err
		}
		c.chunk++
		c.q = 0
	}
	c.q++
	return c.q - 1, true, nil
}

func diffSequence(sa, sb *Stream, da, db *StreamData, qa, qb int) error {
	na := da.SeqStart[qa+1] - da.SeqStart[qa]
	nb := db.SeqStart[qb+1] - db.SeqStart[qb]
	if na != nb {
		return fmt.Errorf("%d samples vs %d", na, nb)
	}
	for k := int64(0); k < na; k++ {
		va, err := sampleValues(sa, da, da.SeqStart[qa]+k)
		if err != nil {
			return err
		}
		vb, err := sampleValues(sb, db, db.SeqStart[qb]+k)
		if err != nil {
			return err
		}
		if len(va) != len(vb) {
			return fmt.Errorf("sample %d: %d values vs %d", k, len(va), len(vb))
		}
		for j := range va {
			if va[j] != vb[j] {
				return fmt.Errorf("sample %d, value %d: %v vs %v", k, j, va[j], vb[j])
			}
		}
	}
	return nil
}

// sampleValues returns a sample's values as comparable values: float64 for numeric types
// (sparse samples expanded to Dim values; NaN as a marker string), the raw element otherwise.
func sampleValues(st *Stream, d *StreamData, s int64) ([]any, error) {
	from, to := d.SampleRange(st, s)
	n := to - from
	if st.Storage == Sparse {
		if st.Dim <= 0 {
			return nil, fmt.Errorf("sparse stream without a dimension")
		}
		n = st.Dim
	}
	out := make([]any, n)
	zero := any(0.0)
	if !d.Values.Type.IsNumeric() {
		zero = nil
	}
	for j := range out {
		out[j] = zero
	}
	for k := from; k < to; k++ {
		j := k - from
		if st.Storage == Sparse {
			j = int(d.Indices[k])
		}
		out[j] = elemValue(d.Values, k)
	}
	return out, nil
}

func elemValue(b Buffer, k int) any {
	switch {
	case b.Type.IsVarLen():
		return b.Strings[k]
	case b.Type.IsNumeric():
		v := b.Float64At(k)
		if math.IsNaN(v) {
			return "NaN"
		}
		return v
	}
	sz := b.Type.Size()
	return string(b.Bytes[k*sz : (k+1)*sz])
}
