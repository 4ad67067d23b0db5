package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
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
	// defines are the NAME=VALUE arguments given with --config (CNTK's command-line defines).
	defines map[string]string
	// rc is the --config reader section, once cntkReader has read it.
	rc *cntkconfig.Reader
	// ctx is the command's context (with its scheduler), passed to the formats as
	// format.Options.Context for the work they do while opening.
	ctx context.Context
}

func (f *inputFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.inputs, "input", nil, "declare a stream `NAME:dense|sparse:DIM[:ALIAS[:TYPE]]` (CTF; repeatable)")
	fl.StringVar(&f.config, "config", "", "CNTK config `FILE` whose reader section declares streams and options")
	fl.StringArrayVarP(&f.params, "opt", "O", nil, "format-specific reader option `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.format, "format", "", "input `FORMAT` ("+strings.Join(format.Names(), ", ")+"); default: detect")
	f.sched.register(cmd)
	// With --config, NAME=VALUE arguments set the configuration's variables; the command sees
	// only the other arguments.
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error { return args(c, f.takeDefines(a)) }
	}
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, a []string) error {
		f.ctx = c.Context()
		return run(c, f.takeDefines(a))
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

func (f *inputFlags) options() (*format.Options, error) {
	o := &format.Options{Config: f.config, Log: os.Stderr, Type: f.elemType, Context: f.ctx, Sequential: f.sequential}
	if err := f.applyConfig(o); err != nil {
		return nil, err
	}
	for _, in := range f.inputs {
		st, err := format.ParseInput(in)
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		o.Inputs = append(o.Inputs, st)
	}
	p, err := parseParams(f.params, "--opt")
	o.Params = mergeParams(o.Params, p)
	return o, err
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
	if len(names) == 0 && f.config != "" {
		rc, err := f.cntkReader()
		if err != nil {
			return nil, err
		}
		return openDeserializers(f, rc)
	}
	o, err := f.options()
	if err != nil {
		return nil, err
	}
	return format.Open(names, f.readFormat(names), o)
}

// readFormat returns the format to read names as: --format's, else the --config reader
// section's for files whose format detection cannot tell (cntkconfig.Reader.FormatFor), else
// "" (detect).
func (f *inputFlags) readFormat(names []string) string { return f.rc.FormatFor(names, f.format) }

// formatOf names the format of the inputs, for reports.
func (f *inputFlags) formatOf(names []string) string {
	if len(names) == 0 && f.rc != nil && len(f.rc.Deserializers) > 0 {
		names = []string{f.rc.Deserializers[0].Path} // the configuration's files
	}
	return inspect.FormatOf(names, f.readFormat(names))
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
