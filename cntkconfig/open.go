package cntkconfig

import (
	"errors"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
)

// Open opens the data files of the reader section as one source, as CNTK's reader would: each
// deserializer's file (Path) in its format with its streams and options, the files joined as
// CNTK joins deserializers, by sequence id when every file has ids, else in file order. base,
// when not nil, adds to every deserializer: its Log and Config are used, its Inputs (when
// set) replace the section's streams and its Params override single options. The formats
// must be registered, as by importing github.com/mlfeed/mlfeed/format/all.
func (r *Reader) Open(base *format.Options) (mlfeed.Source, error) {
	if base == nil {
		base = &format.Options{}
	}
	var srcs []mlfeed.Source
	closeAll := func() {
		for _, s := range srcs {
			s.Close()
		}
	}
	for _, d := range r.Deserializers {
		o := d.Options
		o.Log, o.Config = base.Log, base.Config
		if len(base.Inputs) > 0 {
			o.Inputs = base.Inputs
		}
		if len(base.Params) > 0 {
			params := map[string]string{}
			for k, v := range d.Options.Params {
				params[k] = v
			}
			for k, v := range base.Params {
				params[k] = v
			}
			o.Params = params
		}
		s, err := format.Open([]string{d.Path}, d.Format, &o)
		if err != nil {
			closeAll()
			return nil, err
		}
		srcs = append(srcs, s)
	}
	if len(srcs) == 1 {
		return srcs[0], nil
	}
	// Files without ids are keyed by line, which is joining in order.
	join := mlfeed.Zip
	ids := true
	for _, s := range srcs {
		ids = ids && s.Schema().HasIDs
	}
	if ids {
		join = minibatch.Join
	}
	z, err := join(srcs...)
	if err != nil {
		closeAll()
		return nil, err
	}
	return z, nil
}

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
