//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/cgo"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/minibatch"
	"github.com/mlfeed/mlfeed/shard"
)

// run performs operation name with JSON arguments args and returns its JSON result.
func run(ctx context.Context, name string, args []byte) ([]byte, error) {
	// One scheduler for the operation, as the CLI's default: all cores and the default memory
	// budget, for the work of opening (a CTF file indexed and its streams inferred in pieces),
	// converting and validating.
	ctx = sched.WithContext(ctx, sched.New(0, 0))
	var out any
	var err error
	switch name {
	case "open":
		out, err = opOpen(ctx, args)
	case "info":
		out, err = opInfo(ctx, args)
	case "validate":
		out, err = opValidate(ctx, args)
	case "convert":
		out, err = opConvert(ctx, args)
	case "read":
		out, err = opRead(ctx, args)
	case "source":
		out, err = opSource(ctx, args)
	case "merge":
		out, err = opMerge(args)
	case "formats":
		out = format.Names()
	default:
		err = fmt.Errorf("%w: unknown operation %q", format.ErrUsage, name)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// decode unmarshals JSON arguments strictly: an unknown key is a usage error.
func decode(args []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(args)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: arguments: %v", format.ErrUsage, err)
	}
	return nil
}

// openArgs says what to read, as the CLI's input flags do.
type openArgs struct {
	Paths   []string          `json:"paths"`
	Format  string            `json:"format"`
	Inputs  []string          `json:"inputs"`  // NAME:dense|sparse:DIM[:ALIAS[:TYPE]], as --input
	Options map[string]string `json:"options"` // format-specific reader options, as --opt
	Config  string            `json:"config"`  // CNTK configuration FILE[:SECTION]
	Defines map[string]string `json:"defines"` // $NAME$ values for Config
	Dataset uint64            `json:"dataset"` // an open data set's handle, instead of Paths
	// Deserializers are files each read with its own streams and options, joined as CNTK's
	// composite reader joins its deserializers (CNTK's Python MinibatchSource).
	Deserializers []deserializerArgs `json:"deserializers"`
	// elemType is the type convert converts numbers to, passed to the formats.
	elemType mlfeed.ElemType
	// sequential says the caller reads every chunk once, in order (convert), passed to the
	// formats as format.Options.Sequential.
	sequential bool
	// ctx is the formats' format.Options.Context: the operation's, with its scheduler. A
	// source that outlives the operation (a data set's, a minibatch source's) gets one that
	// its end does not cancel, as an object in object storage reads with it later.
	ctx context.Context
}

// deserializerArgs is one file of a composite source.
type deserializerArgs struct {
	Path    string            `json:"path"`
	Format  string            `json:"format"`
	Inputs  []string          `json:"inputs"`
	Options map[string]string `json:"options"`
}

// splitConfig splits FILE[:SECTION] as the CLI's --config does.
func splitConfig(arg string) (file, section string) { return cntkconfig.SplitSection(arg) }

// cntkReader parses the configuration's reader section, or returns nil without a config.
func (a *openArgs) cntkReader() (*cntkconfig.Reader, error) {
	if a.Config == "" {
		if len(a.Defines) > 0 {
			return nil, fmt.Errorf("%w: defines need a config", format.ErrUsage)
		}
		return nil, nil
	}
	file, section := splitConfig(a.Config)
	cfg, err := cntkconfig.Open(file, &cntkconfig.Options{Defines: a.Defines})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	r, err := cfg.Reader(section)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return r, nil
}

func mergeParams(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// options returns the format options: the config's streams and parameters (of every
// deserializer), then the explicit inputs and options.
func (a *openArgs) options(rc *cntkconfig.Reader) (*format.Options, error) {
	o := &format.Options{Log: io.Discard, Type: a.elemType, Sequential: a.sequential, Context: a.ctx}
	if rc != nil {
		o.Config, _ = splitConfig(a.Config)
		for _, d := range rc.Deserializers {
			if len(a.Inputs) == 0 {
				o.Inputs = append(o.Inputs, d.Options.Inputs...)
			}
			o.Params = mergeParams(o.Params, d.Options.Params)
		}
	}
	for _, in := range a.Inputs {
		st, err := format.ParseInput(in)
		if err != nil {
			return nil, err
		}
		o.Inputs = append(o.Inputs, st)
	}
	o.Params = mergeParams(o.Params, a.Options)
	return o, nil
}

// open opens the data set the arguments name, and returns the config's reader section (or nil)
// and whether the caller owns the source (false for a data set handle's).
func (a *openArgs) open() (src mlfeed.Source, rc *cntkconfig.Reader, own bool, err error) {
	if rc, err = a.cntkReader(); err != nil {
		return nil, nil, false, err
	}
	if a.Dataset != 0 {
		ds, err := value[*dataset](uintptr(a.Dataset))
		if err != nil {
			return nil, nil, false, err
		}
		return ds.src, rc, false, nil
	}
	if len(a.Deserializers) > 0 {
		src, err = a.openComposite()
		return src, rc, err == nil, err
	}
	if len(a.Paths) == 0 && rc == nil {
		return nil, nil, false, fmt.Errorf("%w: no files to read (give paths or a config)", format.ErrUsage)
	}
	if len(a.Paths) > 0 {
		o, err := a.options(rc)
		if err != nil {
			return nil, nil, false, err
		}
		src, err = format.Open(a.Paths, rc.FormatFor(a.Paths, a.Format), o)
		return src, rc, err == nil, err
	}
	src, err = a.openDeserializers(rc)
	return src, rc, err == nil, err
}

// openDeserializers opens the data files of a config's reader section, each with its own
// streams and options (explicit inputs and options applied to each), joined by sequence id
// when they all have ids, else in order, as CNTK's composite reader does.
func (a *openArgs) openDeserializers(rc *cntkconfig.Reader) (mlfeed.Source, error) {
	base, err := a.options(nil)
	if err != nil {
		return nil, err
	}
	var srcs []mlfeed.Source
	for _, d := range rc.Deserializers {
		o := d.Options
		o.Log, o.Context = io.Discard, a.ctx
		o.Config, _ = splitConfig(a.Config)
		if len(a.Inputs) > 0 {
			o.Inputs = base.Inputs
		}
		o.Params = mergeParams(o.Params, a.Options)
		s, err := format.Open([]string{d.Path}, a.Format, &o)
		if err != nil {
			closeSources(srcs)
			return nil, err
		}
		srcs = append(srcs, s)
	}
	return joinSources(srcs)
}

// openComposite opens the files of a.Deserializers, each with its own streams and options.
func (a *openArgs) openComposite() (mlfeed.Source, error) {
	var srcs []mlfeed.Source
	for _, d := range a.Deserializers {
		o := &format.Options{Log: io.Discard, Params: d.Options, Context: a.ctx}
		for _, in := range d.Inputs {
			st, err := format.ParseInput(in)
			if err != nil {
				closeSources(srcs)
				return nil, err
			}
			o.Inputs = append(o.Inputs, st)
		}
		s, err := format.Open([]string{d.Path}, d.Format, o)
		if err != nil {
			closeSources(srcs)
			return nil, err
		}
		srcs = append(srcs, s)
	}
	return joinSources(srcs)
}

func closeSources(srcs []mlfeed.Source) {
	for _, s := range srcs {
		s.Close()
	}
}

// joinSources joins sources by sequence id when they all have ids, else in order, as CNTK
// joins its deserializers (files without ids are keyed by line). It closes them on error.
func joinSources(srcs []mlfeed.Source) (mlfeed.Source, error) {
	if len(srcs) == 1 {
		return srcs[0], nil
	}
	join, ids := mlfeed.Zip, true
	for _, s := range srcs {
		ids = ids && s.Schema().HasIDs
	}
	if ids {
		join = minibatch.Join
	}
	z, err := join(srcs...)
	if err != nil {
		closeSources(srcs)
		return nil, err
	}
	return z, nil
}

// formatOf names the format of the inputs, for info.
func (a *openArgs) formatOf(rc *cntkconfig.Reader) string {
	names := a.Paths
	if len(names) == 0 && rc != nil {
		for _, d := range rc.Deserializers {
			names = append(names, d.Path)
		}
	}
	return inspect.FormatOf(names, a.Format)
}

// dataset is an open data set (mlfeed.open).
type dataset struct {
	src    mlfeed.Source
	format string
}

func (d *dataset) close() { d.src.Close() }

func opOpen(ctx context.Context, args []byte) (any, error) {
	var a openArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	a.ctx = context.WithoutCancel(ctx)
	if a.Dataset != 0 {
		return nil, fmt.Errorf("%w: open takes paths, not a data set", format.ErrUsage)
	}
	src, rc, _, err := a.open()
	if err != nil {
		return nil, err
	}
	ds := &dataset{src: src, format: a.formatOf(rc)}
	doc := inspect.Describe(ds.format, src, false)
	sc := src.Schema()
	doc.Streams = streamsOf(&sc) // as read gives the arrays
	return map[string]any{"handle": uint64(cgo.NewHandle(ds)), "info": doc}, nil
}

func opInfo(ctx context.Context, args []byte) (any, error) {
	var a struct {
		openArgs
		Chunks bool `json:"chunks"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	a.ctx = ctx
	src, rc, own, err := a.open()
	if err != nil {
		return nil, err
	}
	if own {
		defer src.Close()
	}
	name := a.formatOf(rc)
	if a.Dataset != 0 {
		ds, _ := value[*dataset](uintptr(a.Dataset))
		name = ds.format
	}
	return inspect.Describe(name, src, a.Chunks), nil
}

// problem is one validation problem.
type problem struct {
	File    string `json:"file"`
	Message string `json:"message"`
	Kind    int32  `json:"kind"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Offset  int64  `json:"offset"`
	Field   string `json:"field,omitempty"`
}

func problemOf(name string, err error) problem {
	p := problem{File: name, Message: err.Error(), Kind: kindOf(err), Offset: -1}
	var pe *mlfeed.PosError
	if errors.As(err, &pe) {
		p.File, p.Line, p.Column, p.Field = pe.File, pe.Line, pe.Column, pe.Field
		if pe.Line == 0 {
			p.Offset = pe.Offset
		}
	}
	return p
}

func opValidate(ctx context.Context, args []byte) (any, error) {
	var a struct {
		openArgs
		Max int `json:"max"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Max <= 0 {
		a.Max = 100
	}
	rc, err := a.cntkReader()
	if err != nil {
		return nil, err
	}
	opts, err := a.options(rc)
	if err != nil {
		return nil, err
	}
	names := a.Paths
	if len(names) == 0 && rc != nil {
		for _, d := range rc.Deserializers {
			names = append(names, d.Path)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no files to validate", format.ErrUsage)
	}
	problems := []problem{}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_, err := inspect.Validate(ctx, name, a.Format, opts, a.Max, func(e error) {
			if !format.IsWarning(e) { // a warning leaves the file valid
				problems = append(problems, problemOf(name, e))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return problems, nil
}

func opConvert(ctx context.Context, args []byte) (any, error) {
	var a struct {
		openArgs
		Output       string            `json:"output"`
		To           string            `json:"to"`
		Type         string            `json:"type"`
		Densify      bool              `json:"densify"`
		Streams      []string          `json:"streams"`
		Compress     string            `json:"compress"`
		Compat       string            `json:"compat"`
		ChunkSize    int64             `json:"chunk_size"`
		WriteOptions map[string]string `json:"write_options"`
		Shards       int               `json:"shards"`
		ShardSize    int64             `json:"shard_size"`
		Task         []int             `json:"task"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	opts := &convert.Options{Densify: a.Densify, Streams: a.Streams}
	if a.To != "" {
		ft, ok := format.Lookup(a.To)
		if !ok {
			return nil, fmt.Errorf("%w: unknown output format %q", format.ErrUsage, a.To)
		}
		opts.Format = ft
	} else if _, ok := format.ByExtension(a.Output); !ok {
		return nil, fmt.Errorf("%w: cannot tell the output format from %q; name it with to=", format.ErrUsage, a.Output)
	}
	sharded := a.Shards != 0 || a.ShardSize != 0 || a.Task != nil
	if sharded && opts.Format == nil {
		return nil, fmt.Errorf("%w: a directory of shards needs its format: give to=", format.ErrUsage)
	}
	if a.Task != nil && (len(a.Task) != 2 || a.Task[1] < 1 || a.Task[0] < 0 || a.Task[0] >= a.Task[1]) {
		return nil, fmt.Errorf("%w: task=%v: want (index, count) with 0 <= index < count", format.ErrUsage, a.Task)
	}
	if a.Type != "" {
		t, err := mlfeed.ParseElemType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", format.ErrUsage, err)
		}
		opts.Type = t
		a.elemType = t
	}
	opts.Write = format.WriteOptions{Compress: a.Compress, Compat: a.Compat, ChunkSize: a.ChunkSize, Params: a.WriteOptions}
	a.sequential, a.ctx = true, ctx
	src, _, own, err := a.open()
	if err != nil {
		return nil, err
	}
	if own {
		defer src.Close()
	}
	if sharded {
		so := &convert.ShardOptions{Options: *opts, Shards: a.Shards, ShardSize: a.ShardSize}
		if a.Task != nil {
			so.Task, so.Tasks = a.Task[0], a.Task[1]
		}
		if _, err := convert.Shards(ctx, src, a.Output, so); err != nil {
			return nil, err
		}
		return a.Output, nil
	}
	if err := convert.File(ctx, src, a.Output, opts); err != nil {
		return nil, err
	}
	return a.Output, nil
}

// opMerge joins the partial manifests of a conversion's tasks (mlfeed merge).
func opMerge(args []byte) (any, error) {
	var a struct {
		Dir string `json:"dir"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	m, err := shard.Merge(a.Dir)
	if err != nil {
		return nil, err
	}
	return map[string]any{"shards": len(m.Shards), "sequences": m.Sequences, "samples": m.Samples}, nil
}

func opRead(ctx context.Context, args []byte) (any, error) {
	var a struct {
		Dataset uint64   `json:"dataset"`
		Start   int64    `json:"start"`
		Stop    int64    `json:"stop"`
		Streams []string `json:"streams"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	ds, err := value[*dataset](uintptr(a.Dataset))
	if err != nil {
		return nil, err
	}
	src := ds.src
	if len(a.Streams) > 0 {
		if src, err = mlfeed.Select(src, a.Streams...); err != nil {
			return nil, fmt.Errorf("%w: %v", format.ErrUsage, err)
		}
	}
	table := src.Chunks()
	total, _ := mlfeed.Totals(table)
	if a.Start < 0 || a.Stop < a.Start || a.Stop > total {
		return nil, fmt.Errorf("%w: sequences [%d, %d) outside [0, %d)", format.ErrUsage, a.Start, a.Stop, total)
	}
	var parts []*mlfeed.Chunk
	var at int64
	for i, info := range table {
		lo, hi := max(a.Start, at), min(a.Stop, at+int64(info.Sequences))
		if lo < hi {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c, err := src.ReadChunk(ctx, i)
			if err != nil {
				return nil, err
			}
			if lo > at || hi < at+int64(c.Sequences) {
				c = c.Slice(int(lo-at), int(hi-at))
			}
			parts = append(parts, c)
		}
		at += int64(info.Sequences)
	}
	if len(parts) == 0 {
		parts = append(parts, emptyChunk(src.Schema()))
	}
	sc := src.Schema()
	return map[string]any{"handle": uint64(cgo.NewHandle(&result{parts})), "streams": streamsOf(&sc), "sequences": a.Stop - a.Start}, nil
}

// emptyChunk returns a chunk of no sequences of schema sc.
func emptyChunk(sc mlfeed.Schema) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(sc.Streams))}
	for i := range c.Streams {
		c.Streams[i] = mlfeed.StreamData{SeqStart: []int64{0}, Values: mlfeed.NewBuffer(sc.Streams[i].Type, 0)}
	}
	return c
}
