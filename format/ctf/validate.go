package ctf

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// Validate checks the named file strictly and passes every problem to report, each an error
// naming the file, line and column, until report returns false. Besides everything reading
// counts as an error, it reports what CNTK's reader lets through: input names that are not
// declared, dense samples shorter than their dimension, an input twice on one line, a sequence
// id used again after other ids, and control or non-ASCII bytes outside comments. opts.Log,
// MaxErrors, KeepDataInMemory and CacheIndex are ignored. Validate returns an error only when
// it cannot check (bad options, unreadable file).
func Validate(name string, opts *ReaderOptions, report func(error) bool) error {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	o.Log, o.TraceLevel, o.KeepDataInMemory, o.CacheIndex = nil, 0, false, false
	r, err := Open(name, &o)
	if err != nil {
		if errors.Is(err, format.ErrUsage) || !errors.Is(err, mlfeed.ErrFormat) && !errors.Is(err, mlfeed.ErrTooLarge) {
			return err
		}
		report(err)
		return nil
	}
	defer r.Close()
	r.validate(report)
	return nil
}

// validate runs the strict pass over every chunk.
func (r *Reader) validate(report func(error) bool) {
	stopped := false
	strict := func(e error) bool {
		if !report(e) {
			stopped = true
			return false
		}
		return true
	}
	for i := range r.chunks {
		var err error
		if r.double {
			_, _, _, err = parseChunk[float64](context.Background(), r, i, strict)
		} else {
			_, _, _, err = parseChunk[float32](context.Background(), r, i, strict)
		}
		if stopped {
			return
		}
		if err != nil {
			report(err)
			return
		}
	}
	if r.layout.ids {
		r.repeatedIDs(report)
	}
	for _, w := range r.Rounded() {
		if !report(w) {
			return
		}
	}
}

// repeatedIDs reports sequence ids that start more than one sequence.
func (r *Reader) repeatedIDs(report func(error) bool) {
	type use struct {
		key  uint64
		line int64
	}
	var uses []use
	for i := range r.chunks {
		base := r.chunkLine(i)
		r.scanChunk(i, func(q seqInfo) bool {
			uses = append(uses, use{q.key, base + q.line})
			return true
		})
	}
	sort.Slice(uses, func(a, b int) bool {
		if uses[a].key != uses[b].key {
			return uses[a].key < uses[b].key
		}
		return uses[a].line < uses[b].line
	})
	var dups []error
	var lines []int64
	for k := 1; k < len(uses); k++ {
		if uses[k].key != uses[k-1].key {
			continue
		}
		first := k - 1
		for first > 0 && uses[first-1].key == uses[k].key {
			first--
		}
		e := mlfeed.LineError(r.name, int(uses[k].line+1), 1, fmt.Errorf("%w: sequence id %d was already used by the sequence at line %d; ids must not repeat (CNTK starts a new sequence with the same id)", ErrFormat, uses[k].key, uses[first].line+1))
		dups = append(dups, e)
		lines = append(lines, uses[k].line)
	}
	idx := make([]int, len(dups))
	for k := range idx {
		idx[k] = k
	}
	sort.Slice(idx, func(a, b int) bool { return lines[idx[a]] < lines[idx[b]] })
	for _, k := range idx {
		if !report(dups[k]) {
			return
		}
	}
}
