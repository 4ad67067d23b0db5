package ctf

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// inferStat is what a scan learns about one input name.
type inferStat struct {
	name     string
	sparse   bool
	maxCount int   // most values in a dense sample
	maxIndex int64 // largest sparse index, -1 if none
}

// inferScan scans data[from:to] and returns its input names in order of first appearance.
func inferScan(data []byte, from, to int64) []*inferStat {
	var out []*inferStat
	byName := map[string]*inferStat{}
	b := data[from:to]
	i := 0
	for i < len(b) {
		c := b[i]
		if c != '|' {
			i++
			continue
		}
		i++
		if i < len(b) && b[i] == '#' {
			for i < len(b) && b[i] != '|' && b[i] != '\n' {
				i++
			}
			continue
		}
		start := i
		for i < len(b) && b[i] > ' ' && b[i] < 0x80 && b[i] != '|' {
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
		count := 0
		for i < len(b) && b[i] != '|' && b[i] != '\n' {
			if b[i] <= ' ' || b[i] >= 0x80 {
				i++
				continue
			}
			tok := i
			colon := -1
			for i < len(b) && b[i] > ' ' && b[i] < 0x80 && b[i] != '|' {
				if b[i] == ':' && colon < 0 {
					colon = i
				}
				i++
			}
			if colon < 0 {
				count++
				continue
			}
			st.sparse = true
			var ix int64
			ok := colon > tok
			for _, d := range b[tok:colon] {
				if d-'0' > 9 || ix > 1<<40 {
					ok = false
					break
				}
				ix = ix*10 + int64(d-'0')
			}
			if ok && ix > st.maxIndex {
				st.maxIndex = ix
			}
		}
		st.maxCount = max(st.maxCount, count)
	}
	return out
}

// infer determines the streams by scanning every chunk in parallel.
func (r *Reader) infer() ([]mlfeed.Stream, error) {
	parts := make([][]*inferStat, len(r.chunks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, c := range r.chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, c chunkEntry) {
			defer wg.Done()
			parts[i] = inferScan(r.data, c.start, c.end)
			<-sem
		}(i, c)
	}
	wg.Wait()
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
		return nil, fmt.Errorf("%s: %w: no input names found to infer streams from; declare them with --input NAME:dense|sparse:DIM", r.name, ErrFormat)
	}
	streams := make([]mlfeed.Stream, len(order))
	for i, s := range order {
		st := mlfeed.Stream{Name: s.name, Storage: mlfeed.Dense, Dim: max(s.maxCount, 1)}
		if s.sparse {
			st.Storage = mlfeed.Sparse
			st.Dim = int(max(s.maxIndex+1, 1))
		}
		streams[i] = st
		r.inferred = append(r.inferred, fmt.Sprintf("%s:%s:%d", st.Name, st.Storage, st.Dim))
	}
	if r.opts.Log != nil && r.opts.TraceLevel >= levelWarning {
		fmt.Fprintf(r.opts.Log, "INFO: ctf: %s: no inputs declared; inferred from a scan:", r.name)
		for _, s := range r.inferred {
			fmt.Fprintf(r.opts.Log, " --input %s", s)
		}
		fmt.Fprintln(r.opts.Log)
	}
	return streams, nil
}
