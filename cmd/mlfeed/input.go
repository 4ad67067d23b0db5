package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/storage/cache"
)

// inputFlags are the flags every command that reads data takes.
type inputFlags struct {
	inputs []string
	config string
	params []string
	format string
	sched  schedFlags
	// elemType is the type the command converts numbers to (convert --type), passed to the
	// formats as format.Options.Type.
	elemType mlfeed.ElemType
	// sequential says the command reads every chunk once, in order (convert), passed to the
	// formats as format.Options.Sequential.
	sequential bool
	// outside lets a manifest's shards link to files outside the data set's directory
	// (--outside-shards).
	outside bool
	// defines are the NAME=VALUE arguments given with --config (CNTK's command-line defines).
	defines map[string]string
	// ctx is the command's context (with its scheduler and node cache), passed to the
	// formats as format.Options.Context for the work they do while opening.
	ctx context.Context
	// cache is the node cache for object storage, DIR[:SIZE] (--cache); cacheStats prints
	// what went through it (--cache-stats).
	cache      string
	cacheStats bool
}

func (f *inputFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.inputs, "input", nil, "declare a stream `NAME:dense|sparse:DIM[:ALIAS[:TYPE]]` (CTF; repeatable)")
	fl.StringVar(&f.config, "config", "", "CNTK config `FILE` whose reader section declares streams and options")
	fl.StringArrayVarP(&f.params, "opt", "O", nil, "format-specific reader option `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.format, "format", "", "input `FORMAT` ("+strings.Join(format.Names(), ", ")+"); default: detect")
	fl.StringVar(&f.cache, "cache", "", "keep objects read from object storage in the node cache `DIR[:SIZE]` (default size 10GiB; default: $MLFEED_CACHE; off: none)")
	fl.BoolVar(&f.cacheStats, "cache-stats", false, "print the bytes fetched into the node cache and the objects found in it, on standard error")
	fl.BoolVar(&f.outside, "outside-shards", false, "let a manifest's shards be symbolic links to files outside the data set's directory")
	f.sched.register(cmd)
	// With --config, NAME=VALUE arguments set the configuration's variables; the command sees
	// only the other arguments.
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error { return args(c, f.takeDefines(a)) }
	}
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, a []string) error {
		f.ctx = c.Context()
		nc, err := cache.FromSpec(f.cache)
		if err != nil {
			return usageErr("--cache: %v", err)
		}
		if f.cache == "" {
			if nc, err = cache.FromEnv(); err != nil {
				return usageErr("%v", err)
			}
		}
		if f.cache != "" {
			f.ctx = dataset.WithCache(f.ctx, nc)
		}
		err = run(c, f.takeDefines(a))
		if f.cacheStats && nc != nil {
			fmt.Fprintln(c.ErrOrStderr(), nc.Stats())
		}
		return err
	}
}

// takeDefines sets f.defines from the NAME=VALUE arguments among args when --config is
// given (an existing file of that name stays a file) and returns the other arguments.
func (f *inputFlags) takeDefines(args []string) []string {
	if f.config == "" {
		return args
	}
	f.defines = nil
	var rest []string
	for _, a := range args {
		name, value, ok := cntkconfig.ParseDefine(a)
		if _, err := os.Stat(a); !ok || err == nil {
			rest = append(rest, a)
			continue
		}
		if f.defines == nil {
			f.defines = map[string]string{}
		}
		f.defines[name] = value
	}
	return rest
}

// spec returns the data set the flags and names describe (names: the files, or none with
// --config for the configuration's). Errors in --config speak of the flag.
func (f *inputFlags) spec(names []string) (*dataset.Spec, error) {
	s := &dataset.Spec{
		Paths: names, Format: f.format, Config: f.config, Defines: f.defines,
		Type: f.elemType, Sequential: f.sequential, Log: os.Stderr, Cache: f.cache,
		OutsideShards: f.outside,
	}
	for _, in := range f.inputs {
		st, err := format.ParseInput(in)
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		s.Inputs = append(s.Inputs, st)
	}
	p, err := parseParams(f.params, "--opt")
	if err != nil {
		return nil, err
	}
	s.Params = p
	if _, err := s.Reader(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageErr("--config: %v", err)
		}
		return nil, err
	}
	return s, nil
}

func parseParams(kvs []string, flag string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("%s %q: want KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

// open opens the named files as one source; with none, the data files that the --config
// reader section names, with its reader types (as batches does).
func (f *inputFlags) open(names []string) (mlfeed.Source, error) {
	s, err := f.spec(names)
	if err != nil {
		return nil, err
	}
	return s.Open(f.ctx)
}

func shapeString(st *mlfeed.Stream) string {
	if st.Dim == 0 && st.Shape == nil {
		return "variable"
	}
	var d []string
	for _, v := range st.SampleShape() {
		d = append(d, fmt.Sprint(v))
	}
	return strings.Join(d, "x")
}
