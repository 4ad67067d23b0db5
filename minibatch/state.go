package minibatch

import (
	"fmt"
	"math"
)

// State is a reader's position, to checkpoint and restore. It marshals to a small JSON object.
// MinibatchSourcePosition is the global sample position under CNTK's own key, so a state
// written by CNTK ({"minibatchSourcePosition": N}) can be restored too; the other fields make
// the restore exact and let Restore check that the data and the randomization are the same.
type State struct {
	// MinibatchSourcePosition is the global sample position of the next sequence.
	MinibatchSourcePosition int64 `json:"minibatchSourcePosition"`
	// Sweep and Next are the sweep and the position of the next sequence in its order.
	Sweep int64 `json:"sweep,omitempty"`
	Next  int   `json:"next,omitempty"`
	// Sequences, Samples and Chunks describe one sweep of the data the state was taken on.
	Sequences int   `json:"sequences,omitempty"`
	Samples   int64 `json:"samples,omitempty"`
	Chunks    int   `json:"chunks,omitempty"`
	// Randomize, Seed, Window and SampleBasedWindow are the randomization settings.
	Randomize         bool   `json:"randomize,omitempty"`
	Seed              uint64 `json:"seed,omitempty"`
	Window            int64  `json:"window,omitempty"`
	SampleBasedWindow bool   `json:"sampleBasedWindow,omitempty"`
	// Mix places a mixture (NewMix): the mixture sweep and how many sequences each data set
	// has given. Nil for one data set.
	Mix *MixState `json:"mix,omitempty"`
}

// State returns the reader's position: where the next minibatch starts.
func (r *Reader) State() State {
	st := State{MinibatchSourcePosition: r.at.pos, Sequences: r.pl.rz.sequences, Samples: r.samples, Chunks: len(r.infos),
		Randomize: r.pl.rz.randomize, Seed: r.pl.rz.seed, Window: r.pl.rz.window, SampleBasedWindow: r.pl.rz.sampleBased}
	if r.pl.mix != nil {
		st.Mix = r.pl.mix.state(&r.atMix)
		st.Sweep = r.atMix.sweep
	} else if r.at.planned {
		st.Sweep, st.Next = r.at.sweep, r.at.next
	}
	return st
}

// Restore moves the reader to a state returned by State, possibly by another Reader on the
// same data with any number of workers; the minibatches that follow are those that followed
// when the state was taken. A state with only MinibatchSourcePosition set (CNTK's) seeks to that
// position as SetPosition does.
func (r *Reader) Restore(st State) error {
	if r.err != nil {
		return r.err
	}
	if st.Sequences == 0 && st.Samples == 0 {
		return r.SetPosition(st.MinibatchSourcePosition)
	}
	if (st.Mix != nil) != (r.pl.mix != nil) {
		if st.Mix != nil {
			return fmt.Errorf("%w: taken on a mixture of data sets, this reader reads one", ErrState)
		}
		return fmt.Errorf("%w: taken on one data set, this reader reads a mixture", ErrState)
	}
	switch {
	case st.Sequences != r.pl.rz.sequences || st.Samples != r.samples || st.Chunks != len(r.infos):
		return fmt.Errorf("%w: taken on data of %d sequences, %d samples and %d chunks per sweep, this is %d, %d and %d",
			ErrState, st.Sequences, st.Samples, st.Chunks, r.pl.rz.sequences, r.samples, len(r.infos))
	case st.Randomize != r.pl.rz.randomize || st.Randomize && (st.Seed != r.pl.rz.seed || st.Window != r.pl.rz.window || st.SampleBasedWindow != r.pl.rz.sampleBased):
		return fmt.Errorf("%w: taken with other randomization settings (randomize %v, seed %d, window %d, sample-based %v)", ErrState, st.Randomize, st.Seed, st.Window, st.SampleBasedWindow)
	case st.Sweep < 0 || st.Next < 0 || st.Next > st.Sequences || st.MinibatchSourcePosition < 0 ||
		st.Samples > 0 && st.Sweep >= math.MaxInt64/st.Samples-1:
		return fmt.Errorf("%w: position out of range", ErrState)
	}
	if r.pl.mix != nil {
		return r.restoreMix(st)
	}
	if err := r.reposition(st.Sweep); err != nil {
		return err
	}
	r.next = st.Next
	r.pos = st.MinibatchSourcePosition
	r.skipUsed()
	r.at = position{r.cur.sweep, r.next, r.pos, true}
	return nil
}

// SetPosition moves the reader to the first sequence that starts at or after global sample position
// pos, as CNTK does at the start of an epoch. Sweep pos / SweepSamples is re-randomized with
// RandomizationSeed plus the sweep (CNTK restarts the sequence shuffle with the sweep alone
// when seeking back within a sweep; mlfeed does not reproduce that bug).
func (r *Reader) SetPosition(pos int64) error {
	if r.err != nil {
		return r.err
	}
	if pos < 0 {
		return fmt.Errorf("%w: negative position %d", ErrState, pos)
	}
	if r.pl.rz.sequences == 0 || r.samples == 0 {
		return nil
	}
	if r.pl.mix != nil {
		return r.seekMix(pos)
	}
	sweep := pos / r.samples
	if err := r.reposition(sweep); err != nil {
		return err
	}
	next, at, err := r.pl.seek(r.cur, pos)
	if err != nil {
		r.err = err
		return err
	}
	r.next, r.pos = next, at
	r.skipUsed()
	r.at = position{r.cur.sweep, r.next, r.pos, true}
	return nil
}

// reposition drops the minibatches planned ahead, plans sweep s and drops every held chunk
// (kept ones, with KeepDataInMemory, stay kept).
func (r *Reader) reposition(s int64) error {
	if r.closed {
		return fmt.Errorf("%w: the reader is closed", ErrState)
	}
	r.drain()
	r.clearSlots()
	r.planned, r.reqNext, r.planEnd, r.readAhead = false, false, false, false
	if err := r.startSweep(s); err != nil {
		r.err = err
		return err
	}
	r.done = false
	return nil
}

// restoreMix is Restore for a mixture: the next segment starts at the state's point.
func (r *Reader) restoreMix(st State) error {
	pt, err := r.pl.mix.point(st.Mix, st.MinibatchSourcePosition)
	if err != nil {
		return err
	}
	r.pl.mix.reset(pt)
	if err := r.reposition(0); err != nil {
		return err
	}
	r.skipUsed()
	r.at = position{r.cur.sweep, r.next, r.pos, true}
	r.atMix.copyFrom(pt)
	return nil
}

// seekMix is SetPosition for a mixture: it plans the mixture's segments from the start of
// training until the one that holds pos (a draw, and a look-up of the sequence drawn, per
// sequence before pos), then seeks within it.
func (r *Reader) seekMix(pos int64) error {
	r.pl.mix.reset(nil)
	for g := int64(0); ; g++ {
		if err := r.reposition(g); err != nil {
			return err
		}
		if r.cur.end > pos || len(r.cur.order) == 0 || r.pl.lastPlan(r.cur) {
			break
		}
	}
	next, at, err := r.pl.seek(r.cur, pos)
	if err != nil {
		r.err = err
		return err
	}
	r.next, r.pos = next, at
	r.taken = append(r.taken[:0], r.cur.mixAt.taken...)
	for _, i := range r.cur.src[:next] {
		r.taken[i]++
	}
	r.skipUsed()
	r.at = position{r.cur.sweep, r.next, r.pos, true}
	r.atMix.copyFrom(&r.cur.mixAt)
	r.atMix.pos = at
	r.atMix.taken = append(r.atMix.taken[:0], r.taken...)
	return nil
}
