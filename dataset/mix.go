package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
	"github.com/mlfeed/mlfeed/storage"
)

// Mix describes a mixture of data sets (minibatch.NewMix): Spec.Mix.
type Mix struct {
	// Sources are the data sets, each with its weight.
	Sources []MixInput
	// Stop is the stopping rule (minibatch.FirstExhausted by default).
	Stop minibatch.Stop
	// Schedule changes the weights at given global sample positions.
	Schedule []minibatch.MixPhase
}

// MixInput is one data set of a mixture: inputs as Spec.Paths takes them, read with its own
// format, streams and options (the Spec's are the defaults).
type MixInput struct {
	// Name names it in messages and the CLI's summary; empty: its paths, joined with ",".
	Name   string
	Weight float64
	Paths  []string
	// Format, Inputs and Params, when set, replace the Spec's Format and Inputs, and
	// override its Params.
	Format string
	Inputs []mlfeed.Stream
	Params map[string]string
}

// label returns the input's name, or its paths.
func (in *MixInput) label() string {
	if in.Name != "" {
		return in.Name
	}
	return strings.Join(in.Paths, ",")
}

// openMix opens every data set of the mixture and returns their mixture.
func (s *Spec) openMix(ctx context.Context) (mlfeed.Source, error) {
	m := s.Mix
	if len(s.Paths) > 0 || s.Config != "" || len(s.Deserializers) > 0 {
		return nil, fmt.Errorf("%w: a mixture takes the place of paths, a config and deserializers", format.ErrUsage)
	}
	if len(m.Sources) == 0 {
		return nil, fmt.Errorf("%w: a mixture of no data sets", format.ErrUsage)
	}
	mix := minibatch.Mix{Stop: m.Stop, Schedule: m.Schedule}
	closeMix := func() {
		for _, x := range mix.Sources {
			x.Source.Close()
		}
	}
	for i := range m.Sources {
		in := &m.Sources[i]
		if len(in.Paths) == 0 {
			closeMix()
			return nil, fmt.Errorf("%w: mixture data set %d has no paths", format.ErrUsage, i)
		}
		// Every other setting of the Spec (the element type, the log, those added later)
		// applies to each data set.
		sub := *s
		// The node cache, if any, rides in ctx: one for every data set.
		sub.Mix, sub.Config, sub.Defines, sub.Deserializers, sub.rc = nil, "", nil, nil, nil
		sub.Cache = ""
		sub.Paths, sub.Params = in.Paths, merge(s.Params, in.Params)
		if in.Format != "" {
			sub.Format = in.Format
		}
		if len(in.Inputs) > 0 {
			sub.Inputs = in.Inputs
		}
		src, err := sub.Open(ctx)
		if err != nil {
			closeMix()
			return nil, err
		}
		mix.Sources = append(mix.Sources, minibatch.MixSource{Name: in.label(), Source: src, Weight: in.Weight})
	}
	x, err := minibatch.NewMix(mix)
	if err != nil {
		closeMix()
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return x, nil
}

// ParseMixArg parses a command line's mixture data set: "WEIGHT=PATH".
func ParseMixArg(arg string) (MixInput, error) {
	w, path, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return MixInput{}, fmt.Errorf("%w: mixture data set %q: want WEIGHT=PATH", format.ErrUsage, arg)
	}
	v, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return MixInput{}, fmt.Errorf("%w: mixture data set %q: the weight %q is not a number", format.ErrUsage, arg, w)
	}
	return MixInput{Weight: v, Paths: []string{path}}, nil
}

// mixFile is the JSON form of a mixture (ParseMix).
type mixFile struct {
	Sources  []mixFileSource `json:"sources"`
	Stop     string          `json:"stop"`
	Schedule []struct {
		At      *int64    `json:"at"`
		Weights []float64 `json:"weights"`
	} `json:"schedule"`
}

type mixFileSource struct {
	Name    string         `json:"name"`
	Weight  *float64       `json:"weight"`
	Path    string         `json:"path"`
	Paths   []string       `json:"paths"`
	Format  string         `json:"format"`
	Inputs  []string       `json:"inputs"`
	Options map[string]any `json:"options"`
}

// ParseMix parses a mixture's JSON form (the CLI's --mix-file, the Python package's mix=):
//
//	{"sources": [{"weight": 0.7, "path": "wiki/"},
//	             {"weight": 0.3, "paths": ["a.idx", "b.idx"], "format": "idx",
//	              "inputs": ["x:dense:3"], "options": {"key": "value"}, "name": "code"}],
//	 "stop": "first_exhausted",
//	 "schedule": [{"at": 1000000, "weights": [0.5, 0.5]}]}
//
// Each source has a weight and a path or paths; "stop" is "first_exhausted" (the default),
// "all_exhausted" or "never". Relative local paths are taken from dir ("" for the working
// directory). Errors wrap format.ErrUsage and name where (name: line:column, or the source).
func ParseMix(data []byte, name, dir string) (*Mix, error) {
	var f mixFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", format.ErrUsage, jsonPlace(name, data, err), jsonMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: %s: data after the mixture's object", format.ErrUsage, name)
	}
	m := &Mix{}
	if f.Stop != "" {
		st, err := minibatch.ParseStop(f.Stop)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", format.ErrUsage, name, err)
		}
		m.Stop = st
	}
	if len(f.Sources) == 0 {
		return nil, fmt.Errorf("%w: %s: no sources", format.ErrUsage, name)
	}
	for i, fs := range f.Sources {
		where := fmt.Sprintf("%s: source %d", name, i)
		if fs.Weight == nil {
			return nil, fmt.Errorf("%w: %s has no weight", format.ErrUsage, where)
		}
		in := MixInput{Name: fs.Name, Weight: *fs.Weight, Format: fs.Format, Paths: fs.Paths}
		if fs.Path != "" {
			if len(fs.Paths) > 0 {
				return nil, fmt.Errorf("%w: %s has both path and paths", format.ErrUsage, where)
			}
			in.Paths = []string{fs.Path}
		}
		if len(in.Paths) == 0 {
			return nil, fmt.Errorf("%w: %s has no path", format.ErrUsage, where)
		}
		for k, p := range in.Paths {
			if dir != "" && !storage.IsURL(p) && !filepath.IsAbs(p) {
				in.Paths[k] = filepath.Join(dir, p)
			}
		}
		for _, decl := range fs.Inputs {
			st, err := format.ParseInput(decl)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: inputs: %w", format.ErrUsage, where, err)
			}
			in.Inputs = append(in.Inputs, st)
		}
		for k, v := range fs.Options {
			if in.Params == nil {
				in.Params = map[string]string{}
			}
			switch v := v.(type) {
			case string:
				in.Params[k] = v
			case float64:
				in.Params[k] = strconv.FormatFloat(v, 'g', -1, 64)
			case bool:
				in.Params[k] = strconv.FormatBool(v)
			default:
				return nil, fmt.Errorf("%w: %s: option %q: want a string, number or boolean", format.ErrUsage, where, k)
			}
		}
		m.Sources = append(m.Sources, in)
	}
	for k, ph := range f.Schedule {
		if ph.At == nil {
			return nil, fmt.Errorf("%w: %s: schedule entry %d has no \"at\"", format.ErrUsage, name, k)
		}
		m.Schedule = append(m.Schedule, minibatch.MixPhase{At: *ph.At, Weights: ph.Weights})
	}
	return m, nil
}

// jsonPlace returns name:line:column of a JSON decoding error's offset, or name.
func jsonPlace(name string, data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return name
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// jsonMessage returns a decoding error's message without encoding/json's prefix.
func jsonMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
