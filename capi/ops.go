//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"strings"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/shard"
)

// run performs operation name with JSON arguments args and returns its JSON result.
func run(ctx context.Context, name string, args []byte) ([]byte, error) {
	// One scheduler for the operation, as the CLI's default: all cores and the default memory
	// budget, for the work of opening (a CTF file indexed and its streams inferred in pieces),
	// converting and validating.
	ctx = sched.WithContext(ctx, sched.New(0, 0))
	log := &warnLog{}
	ctx = withLog(ctx, log)
	var out any
	var err error
	switch name {
	case "open":
		out, err = opOpen(ctx, args)
	case "info":
		out, err = opInfo(ctx, args)
	case "stats":
		out, err = opStats(ctx, args)
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
	case "cache_stats":
		out, err = opCacheStats(args)
	case "close":
		out, err = opClose(args)
	case "formats":
		out = format.Names()
	default:
		err = fmt.Errorf("%w: unknown operation %q", format.ErrUsage, name)
	}
	if err != nil {
		return nil, err
	}
	// Every result carries the warnings the operation logged; Python raises each with
	// warnings.warn.
	return json.Marshal(struct {
		Value    any      `json:"value"`
		Warnings []string `json:"warnings,omitempty"`
	}{out, log.take()})
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
	// OutsideShards lets a manifest's shards link outside the data set's directory, as
	// --outside-shards.
	OutsideShards bool   `json:"outside_shards"`
	Dataset       uint64 `json:"dataset"` // an open data set's handle, instead of Paths
	Cache         string `json:"cache"`   // the node cache DIR[:SIZE] for object storage, as --cache
	// Deserializers are files each read with its own streams and options, joined as CNTK's
	// composite reader joins its deserializers (CNTK's Python MinibatchSource).
	Deserializers []deserializerArgs `json:"deserializers"`
	// Mix is a mixture of data sets in set proportions, in place of Paths: the JSON of
	// `mlfeed batches --mix-file` (dataset.ParseMix).
	Mix json.RawMessage `json:"mix"`
}

// deserializerArgs is one file of a composite source.
type deserializerArgs struct {
	Path    string            `json:"path"`
	Format  string            `json:"format"`
	Inputs  []string          `json:"inputs"`
	Options map[string]string `json:"options"`
}

// parseInputs parses stream declarations as --input does.
func parseInputs(decls []string) ([]mlfeed.Stream, error) {
	var out []mlfeed.Stream
	for _, in := range decls {
		st, err := format.ParseInput(in)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// spec returns the data set the arguments describe (without Dataset).
func (a *openArgs) spec() (*dataset.Spec, error) {
	s := &dataset.Spec{Paths: a.Paths, Format: a.Format, Params: a.Options, Config: a.Config, Defines: a.Defines, Cache: a.Cache, OutsideShards: a.OutsideShards}
	var err error
	if s.Inputs, err = parseInputs(a.Inputs); err != nil {
		return nil, err
	}
	for _, d := range a.Deserializers {
		ds := dataset.Deserializer{Path: d.Path, Format: d.Format, Params: d.Options}
		if ds.Inputs, err = parseInputs(d.Inputs); err != nil {
			return nil, err
		}
		s.Deserializers = append(s.Deserializers, ds)
	}
	if len(a.Mix) > 0 && string(a.Mix) != "null" {
		if s.Mix, err = dataset.ParseMix(a.Mix, "mix", ""); err != nil {
			return nil, err
		}
	}
	if len(s.Paths) == 0 && len(s.Deserializers) == 0 && s.Config == "" && s.Mix == nil {
		return nil, fmt.Errorf("%w: no files to read (give paths or a config)", format.ErrUsage)
	}
	if _, err := s.Reader(); err != nil {
		return nil, err
	}
	return s, nil
}

// open opens the data set the arguments name (an open data set's handle, or a Spec's
// source opened with ctx, which carries the scheduler and outlives the call where the source
// does), and returns its Spec (nil for a handle's) and release, which the caller closes once
// it no longer reads the source: for a Spec's source, its Close; for a handle's, the end of
// its use (see openDataset.use; a minibatch source, which outlives the call, is a lasting
// use).
func (a *openArgs) open(ctx context.Context, adjust func(*dataset.Spec), lasting bool) (src mlfeed.Source, spec *dataset.Spec, release closer.Stack, err error) {
	if a.Dataset != 0 {
		if len(a.Paths) > 0 || a.Config != "" || len(a.Deserializers) > 0 || len(a.Mix) > 0 {
			return nil, nil, nil, fmt.Errorf("%w: a data set takes the place of paths, a config, deserializers and a mixture", format.ErrUsage)
		}
		if a.Cache != "" {
			return nil, nil, nil, fmt.Errorf("%w: the cache applies to paths, not to an open data set (give it to open)", format.ErrUsage)
		}
		ds, err := value[*openDataset](uintptr(a.Dataset))
		if err != nil {
			return nil, nil, nil, err
		}
		done, err := ds.use(lasting)
		if err != nil {
			return nil, nil, nil, err
		}
		return ds.src, nil, closer.Stack{func() error { done(); return nil }}, nil
	}
	if spec, err = a.spec(); err != nil {
		return nil, nil, nil, err
	}
	if w := logOf(ctx); w != nil {
		spec.Log = w
	}
	if adjust != nil {
		adjust(spec)
	}
	if src, err = spec.Open(ctx); err != nil {
		return nil, nil, nil, err
	}
	return src, spec, closer.Stack{src.Close}, nil
}

// openDataset is an open data set (mlfeed.open).
//
// Its source may be read by several calls at once, and closed by another (the Python package
// waits for its calls in flight before it closes, but the ABI does not count on it): every
// call that reads it holds a use (openDataset.use), and shut waits for the calls' uses to end
// before it closes the source, after which uses are refused as usage errors. A minibatch
// source over the data set holds a lasting use until it is freed: a data set shut while such
// sources remain closes when the last of them is freed.
type openDataset struct {
	src    mlfeed.Source
	format string
	log    *warnLog // what its formats log after opening (reads), passed on by each read

	mu       sync.RWMutex // held shared by each call's use, alone by shut
	sources  int          // lasting uses: the minibatch sources reading src
	shutting bool         // shut was called: no new use; src closes when sources is 0
	closed   bool         // src was closed
	closeErr error
}

// use starts a use of d's source and returns the function that ends it: for a call (lasting
// false), a shared hold of d.mu, which shut waits for; for a minibatch source (lasting), a
// count, d closing when its last lasting use ends after shut. A shut data set refuses it.
func (d *openDataset) use(lasting bool) (done func(), err error) {
	closed := fmt.Errorf("%w: the data set is closed", format.ErrUsage)
	if !lasting {
		d.mu.RLock()
		if d.shutting {
			d.mu.RUnlock()
			return nil, closed
		}
		return d.mu.RUnlock, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shutting {
		return nil, closed
	}
	d.sources++
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.sources--; d.sources == 0 && d.shutting && !d.closed {
				d.closed, d.closeErr = true, d.src.Close()
			}
		})
	}, nil
}

// shut closes the data set once, after the calls reading it have ended, and returns what
// Close returned: a shard read through the node cache while it was fetched is checked against
// its manifest once all of it has come, which can be after the last read. While minibatch
// sources read the data set, the close waits for the last of them to be freed, and shut
// returns nil.
func (d *openDataset) shut() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.shutting = true
	if !d.closed && d.sources == 0 {
		d.closed, d.closeErr = true, d.src.Close()
	}
	return d.closeErr
}

func (d *openDataset) close() { d.shut() }

// opClose closes the data set (mlfeed.open's) or minibatch source whose handle args name,
// and returns Close's error; the handle stays valid for mlfeed_free.
func opClose(args []byte) (any, error) {
	var a struct {
		Dataset uint64 `json:"dataset"`
		Source  uint64 `json:"source"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if (a.Dataset == 0) == (a.Source == 0) {
		return nil, fmt.Errorf("%w: close takes a dataset or a source handle", format.ErrUsage)
	}
	if a.Dataset != 0 {
		d, err := value[*openDataset](uintptr(a.Dataset))
		if err != nil {
			return nil, err
		}
		return nil, d.shut()
	}
	s, err := value[*source](uintptr(a.Source))
	if err != nil {
		return nil, err
	}
	return nil, s.shut()
}

func opOpen(ctx context.Context, args []byte) (any, error) {
	var a openArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Dataset != 0 {
		return nil, fmt.Errorf("%w: open takes paths, not a data set", format.ErrUsage)
	}
	// The data set outlives the call: its source reads with a context the call's end does not
	// cancel (an object in object storage reads with it later).
	src, spec, _, err := a.open(context.WithoutCancel(ctx), nil, false)
	if err != nil {
		return nil, err
	}
	ds := &openDataset{src: src, format: spec.FormatName(), log: logOf(ctx)}
	doc := inspect.Describe(ds.format, src, false)
	sc := src.Schema()
	doc.Streams = streamsOf(&sc) // as read gives the arrays
	return map[string]any{"handle": uint64(cgo.NewHandle(ds)), "info": doc}, nil
}

func opInfo(ctx context.Context, args []byte) (_ any, err error) {
	var a struct {
		openArgs
		Chunks bool `json:"chunks"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	src, spec, release, err := a.open(ctx, nil, false)
	if err != nil {
		return nil, err
	}
	defer closer.Into(&release, &err)
	var name string
	if spec != nil {
		name = spec.FormatName()
	} else {
		ds, _ := value[*openDataset](uintptr(a.Dataset))
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
	spec, err := a.spec()
	if err != nil {
		return nil, err
	}
	opts, err := spec.FormatOptions(ctx)
	if err != nil {
		return nil, err
	}
	names, err := spec.Files()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no files to validate", format.ErrUsage)
	}
	problems := []problem{}
	// A sharded data set's manifest is checked against its shards first, as the CLI does; an
	// argument that names nothing to check is a problem of its own.
	var files []string
	for _, arg := range names {
		paths, _, err := dataset.ValidateArg(arg, spec.Format, opts, func(e error) { problems = append(problems, problemOf(arg, e)) })
		if err != nil {
			problems = append(problems, problemOf(arg, err))
		}
		files = append(files, paths...)
	}
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_, err := inspect.Validate(ctx, name, spec.FormatFor([]string{name}), opts, a.Max, func(e error) {
			if format.IsWarning(e) { // a warning leaves the file valid
				fmt.Fprintln(logOf(ctx), e)
			} else {
				problems = append(problems, problemOf(name, e))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return problems, nil
}

func opConvert(ctx context.Context, args []byte) (_ any, err error) {
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
		ft, err := format.Resolve(a.To)
		if err != nil {
			return nil, fmt.Errorf("%w: to: %w", format.ErrUsage, err)
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
	}
	opts.Write = format.WriteOptions{Compress: a.Compress, Compat: a.Compat, ChunkSize: a.ChunkSize, Params: a.WriteOptions}
	src, _, release, err := a.open(ctx, func(s *dataset.Spec) { s.Type, s.Sequential = opts.Type, true }, false)
	if err != nil {
		return nil, err
	}
	defer closer.Into(&release, &err)
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

// opCacheStats returns what this process fetched through the node cache named (DIR[:SIZE];
// empty: the one MLFEED_CACHE names), as --cache-stats prints it; null for none.
func opCacheStats(args []byte) (any, error) {
	var a struct {
		Cache string `json:"cache"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	c, err := (&dataset.Spec{Cache: a.Cache}).NodeCache()
	if err != nil || c == nil {
		return nil, err
	}
	s := c.Stats()
	return map[string]any{
		"dir": c.Dir(), "limit": c.Limit(),
		"fetched_bytes": s.Fetched, "fills": s.Fills, "hits": s.Hits, "hit_bytes": s.HitBytes,
		"bypassed": s.Bypassed, "bypassed_bytes": s.BypassedBytes,
	}, nil
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
	ds, err := value[*openDataset](uintptr(a.Dataset))
	if err != nil {
		return nil, err
	}
	done, err := ds.use(false)
	if err != nil {
		return nil, err
	}
	defer done()
	defer func() {
		for _, l := range ds.log.take() { // what reading logged, for this call's warnings
			fmt.Fprintln(logOf(ctx), l)
		}
	}()
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
