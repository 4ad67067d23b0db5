package ctf

import (
	"bytes"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// inferStat is what a scan learns about one input name.
type inferStat struct {
	name     string
	sparse   bool
	maxCount int   // most values in a dense sample
	maxIndex int64 // largest sparse index, -1 if none
}

// Byte classes of the inference scan.
const (
	clsToken = iota
	clsSep   // white space, control and non-ASCII bytes
	clsColon
	clsEnd // '|' and '\n'
)

var inferClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '|' || c == '\n':
			t[c] = clsEnd
		case c <= ' ' || c >= 0x80:
			t[c] = clsSep
		case c == ':':
			t[c] = clsColon
		}
	}
	return t
}()

// inferScan scans data[from:to] and returns its input names in order of first appearance.
// With check set it also reports whether a value needs float64 (see needs64).
func inferScan(data []byte, from, to int64, check bool) (out []*inferStat, wide bool) {
	byName := map[string]*inferStat{}
	b := data[from:to]
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '|')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(b) && b[i] == '#' {
			for i < len(b) && inferClass[b[i]] != clsEnd {
				i++
			}
			continue
		}
		start := i
		for i < len(b) && inferClass[b[i]] == clsToken || i < len(b) && b[i] == ':' {
			i++
		}
		if i == start {
			continue
		}
		st := byName[string(b[start:i])]
		if st == nil {
			st = &inferStat{name: string(b[start:i]), maxIndex: -1}
			byName[st.name] = st
			out = append(out, st)
		}
		count, tok, colon := 0, -1, false
		for ; i < len(b); i++ {
			switch inferClass[b[i]] {
			case clsToken:
				if tok < 0 {
					tok, colon = i, false
					count++
				}
				continue
			case clsSep:
				if check && tok >= 0 && !wide {
					wide = needs64(b[tok:i])
				}
				tok = -1
				continue
			case clsColon:
				if tok < 0 {
					tok, colon = i, false
					count++
				}
				if !colon {
					colon = true
					st.sparse = true
					if ix, ok := index(b[tok:i]); ok && ix > st.maxIndex {
						st.maxIndex = ix
					}
				}
				continue
			}
			break
		}
		if check && tok >= 0 && !wide {
			wide = needs64(b[tok:i])
		}
		if !st.sparse {
			st.maxCount = max(st.maxCount, count)
		}
	}
	return out, wide
}

// index parses the digits of a sparse index, false if there are none or others.
func index(b []byte) (int64, bool) {
	var ix int64
	for _, d := range b {
		if d-'0' > 9 || ix > 1<<40 {
			return 0, false
		}
		ix = ix*10 + int64(d-'0')
	}
	return ix, len(b) > 0
}

// infer determines the streams (and, unless the precision is chosen, whether values need
// float64) by a scan of every chunk, on the caller's goroutine.
func (r *Reader) infer() ([]mlfeed.Stream, error) {
	parts := make([][]*inferStat, len(r.chunks))
	check := r.opts.Precision == mlfeed.Invalid && !r.double
	wide := false
	for i, c := range r.chunks {
		var w bool
		parts[i], w = inferScan(r.data, c.start, c.end, check && !wide)
		wide = wide || w
	}
	var order []*inferStat
	all := map[string]*inferStat{}
	for _, p := range parts {
		for _, s := range p {
			t := all[s.name]
			if t == nil {
				all[s.name] = s
				order = append(order, s)
				continue
			}
			t.sparse = t.sparse || s.sparse
			t.maxCount = max(t.maxCount, s.maxCount)
			t.maxIndex = max(t.maxIndex, s.maxIndex)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: %w: no input names found to infer streams from; declare them (ReaderOptions.Inputs)", r.name, ErrFormat)
	}
	streams := make([]mlfeed.Stream, len(order))
	for i, s := range order {
		st := mlfeed.Stream{Name: s.name, Storage: mlfeed.Dense, Dim: max(s.maxCount, 1)}
		if s.sparse {
			if s.maxIndex >= 1<<31-1 {
				return nil, fmt.Errorf("%s: %w: input %q has sparse index %d; sparse dimensions must fit int32", r.name, ErrFormat, s.name, s.maxIndex)
			}
			st.Storage = mlfeed.Sparse
			st.Dim = int(max(s.maxIndex+1, 1))
		}
		streams[i] = st
		r.inferred = append(r.inferred, fmt.Sprintf("%s:%s:%d", st.Name, st.Storage, st.Dim))
	}
	if wide {
		r.double, r.inferredDouble = true, true
	}
	if r.opts.Log != nil && r.opts.TraceLevel >= levelWarning {
		fmt.Fprintf(r.opts.Log, "INFO: ctf: %s: no inputs declared; inferred from a scan:", r.name)
		for _, s := range r.inferred {
			fmt.Fprintf(r.opts.Log, " --input %s", s)
		}
		if r.inferredDouble {
			fmt.Fprint(r.opts.Log, ", precision=double (values float32 cannot hold)")
		}
		fmt.Fprintln(r.opts.Log)
	}
	return streams, nil
}
