package cntkconfig

import (
	"errors"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
)

// MinibatchConfig returns the minibatch engine's settings the reader section makes:
// randomization on or off, seed, window (in chunks or samples), frame mode and trace level.
// The other fields are the zero Config's, for the caller to set.
func (r *Reader) MinibatchConfig() minibatch.Config {
	return minibatch.Config{
		NoRandomize:                    !r.Randomize,
		RandomizationSeed:              r.RandomizationSeed,
		RandomizationWindow:            r.RandomizationWindow,
		SampleBasedRandomizationWindow: r.SampleBasedRandomizationWindow,
		FrameMode:                      r.FrameMode,
		TraceLevel:                     r.TraceLevel,
	}
}

// FormatFor returns the format to read the files names with under this reader section:
// given when it is not empty; else the format of the section's reader type (its
// deserializers' when they agree) if detection cannot tell the format of one of the files,
// as for CTF data named "train.cntk.sparse" (CNTK reads a file as its reader type says);
// else "", to detect.
func (r *Reader) FormatFor(names []string, given string) string {
	if given != "" || r == nil || len(r.Deserializers) == 0 {
		return given
	}
	f := r.Deserializers[0].Format
	for _, d := range r.Deserializers[1:] {
		if d.Format != f {
			return ""
		}
	}
	for _, n := range names {
		if _, err := format.Detect(n); err != nil && errors.Is(err, mlfeed.ErrUnknownFormat) {
			return f
		}
	}
	return ""
}
