package ctf

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
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
		// tok is where the current token starts, val where its number does (after the
		// token's first colon, if any), both -1 between tokens.
		count, tok, val := 0, -1, -1
		for ; i < len(b); i++ {
			switch inferClass[b[i]] {
			case clsToken:
				if tok < 0 {
					tok, val = i, i
					count++
				}
				continue
			case clsSep:
				if check && tok >= 0 && !wide {
					wide = needs64(b[val:i])
				}
				tok = -1
				continue
			case clsColon:
				if tok < 0 {
					tok, val = i, i
					count++
				}
				if val == tok {
					st.sparse = true
					if ix, ok := index(b[tok:i]); ok && ix > st.maxIndex {
						st.maxIndex = ix
					}
					val = i + 1
				}
				continue
			}
			break
		}
		if check && tok >= 0 && !wide {
			wide = needs64(b[val:i])
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

// inferMinPiece is the least data a piece of the inference scan holds (a variable for tests).
var inferMinPiece int64 = 4 << 20

// infer determines the streams (and, unless the precision is chosen, whether values need
// float64) by a scan of the data, in pieces cut at line starts that run on the idle threads
// of the scheduler in the options' Context (on the caller's goroutine without one).
func (r *Reader) infer() ([]mlfeed.Stream, error) {
	ctx := r.opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	threads := 1
	if s := sched.FromContext(ctx); s != nil {
		threads = s.Threads()
	}
	pieces := r.inferPieces(threads)
	parts := make([][]*inferStat, len(pieces))
	check := r.opts.Precision == mlfeed.Invalid && !r.double
	var wide atomic.Bool
	err := sched.Parallel(ctx, len(pieces), func(ctx context.Context, k int) (err error) {
		defer mmap.Recover(mmap.Catch(), &err) // the mapped file may shrink meanwhile
		var w bool
		parts[k], w = inferScan(r.data, pieces[k][0], pieces[k][1], check && !wide.Load())
		if w {
			wide.Store(true)
		}
		return nil
	})
	if err != nil {
		return nil, r.fileError(err)
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
	if wide.Load() {
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

// inferPieces cuts the chunks' data into the pieces of the inference scan, in order: about
// four per thread, each at least inferMinPiece bytes (a chunk smaller than that is one), cut
// after a newline so that each starts at a line's start.
func (r *Reader) inferPieces(threads int) [][2]int64 {
	var total int64
	for _, c := range r.chunks {
		total += c.end - c.start
	}
	size := max(inferMinPiece, total/int64(4*threads), 1)
	var ps [][2]int64
	for _, c := range r.chunks {
		for from := c.start; from < c.end; {
			to := c.end
			if to-from >= 2*size {
				if i := bytes.IndexByte(r.data[from+size:c.end], '\n'); i >= 0 {
					to = from + size + int64(i) + 1
				}
			}
			ps = append(ps, [2]int64{from, to})
			from = to
		}
	}
	return ps
}
