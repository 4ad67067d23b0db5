// Package dataset opens data sets: it turns a description of what to read (a Spec: files,
// directories, globs and manifests of shards, object-storage URLs, declared streams, reader
// options, a CNTK configuration and its defines) into one mlfeed.Source, and gives the
// minibatch engine's settings that the description implies. The CLI, the Python package's C
// ABI and Go programs all describe what to open with a Spec, so the rules (which format,
// how inputs combine, how options merge, how a CNTK config's deserializers are joined) are
// written once, here.
//
// The formats must be registered (import github.com/mlfeed/mlfeed/format/all or the format
// packages wanted), and object storage needs its drivers (github.com/mlfeed/mlfeed/storage/all
// or one driver); a program that imports neither storage driver links no network code.
package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
	"github.com/mlfeed/mlfeed/storage/cache"
)

// Spec describes a data set to open. The zero value opens nothing; Paths or Config (or
// Deserializers) say what to read.
type Spec struct {
	// Paths are the inputs: files, directories or globs of shards, manifests (mlfeed.json),
	// object-storage URLs or prefixes (s3://, gs://, azblob://). Several inputs that hold one
	// record set each (IDX images and labels) combine into one data set, in order; stream
	// names that repeat get a suffix ("features_2"). Empty with Config: the configuration's
	// data files.
	Paths []string
	// Format forces the input format by name ("ctf"); empty detects it from each file's
	// first bytes, then its name (and, with Config, the reader type for names detection
	// cannot tell).
	Format string
	// Inputs declare the streams to read (format.Options.Inputs; the CLI's --input). With
	// Config they replace the configuration's streams.
	Inputs []mlfeed.Stream
	// Params are format-specific reader options (the CLI's --opt). With Config they override
	// the configuration's reader keys.
	Params map[string]string
	// Config is a CNTK configuration FILE[:SECTION] whose reader section declares the data
	// files, streams, options and randomization (package cntkconfig).
	Config string
	// Defines set the configuration's $NAME$ variables (CNTK's command-line NAME=VALUE).
	Defines map[string]string
	// Deserializers, when set, are the files to read each with its own format, streams and
	// options, joined as CNTK's composite reader joins its deserializers (the Python
	// mlfeed.cntk.MinibatchSource). Paths and Config must then be empty.
	Deserializers []Deserializer
	// Type is the element type the caller converts numbers to (format.Options.Type).
	Type mlfeed.ElemType
	// Sequential says the caller reads every chunk once, in order (format.Options.Sequential).
	Sequential bool
	// OutsideShards lets a manifest's shards resolve, through symbolic links, to files outside
	// the data set's directory (format.Options.OutsideShards, shard.ResolveOptions).
	OutsideShards bool
	// Log receives the formats' warnings and information; nil discards them.
	Log io.Writer
	// Randomization holds explicit minibatch settings that override the configuration's
	// (MinibatchConfig).
	Randomization Randomization
	// Mix, when set, makes the data set a mixture of data sets in set proportions: Open
	// opens each (its paths, with its own format, streams and options over this Spec's) and
	// returns their *minibatch.Mixed, which the minibatch engine draws by the weights.
	// Paths, Config and Deserializers must then be empty.
	Mix *Mix
	// Cache is the node cache for object-storage inputs, DIR[:SIZE] (package storage/cache):
	// objects are fetched once into DIR, shared by the node's processes, and read from there
	// while they stay (least recently used go first when the SIZE limit, default 10 GiB, is
	// reached). Empty: the one the environment variable MLFEED_CACHE names, if any; "off":
	// none.
	Cache string

	rc *cntkconfig.Reader // the configuration's reader section, once parsed
}

// Deserializer is one file of a composite data set.
type Deserializer struct {
	Path   string
	Format string // empty: detect
	Inputs []mlfeed.Stream
	Params map[string]string
}

// Randomization holds the minibatch settings a CNTK configuration's reader section also sets.
// Nil fields keep the configuration's value, or the engine's default without one.
type Randomization struct {
	Randomize    *bool
	Seed         *uint64
	Window       *int64
	SampleWindow *bool
	FrameMode    *bool
}

// ErrNoInput is wrapped (with format.ErrUsage) by the error of a Spec that names nothing to
// read.
var ErrNoInput = errors.New("no data to read: give paths or a config")

// Reader returns the configuration's reader section (nil without Config), parsing it on the
// first call. Errors for a configuration that is not there wrap os.ErrNotExist; others, which
// say what is wrong with it, wrap format.ErrUsage.
func (s *Spec) Reader() (*cntkconfig.Reader, error) {
	if s.Config == "" {
		if len(s.Defines) > 0 {
			return nil, fmt.Errorf("%w: defines (NAME=VALUE) need a CNTK config", format.ErrUsage)
		}
		return nil, nil
	}
	if s.rc != nil {
		return s.rc, nil
	}
	file, section := cntkconfig.SplitSection(s.Config)
	cfg, err := cntkconfig.Open(file, &cntkconfig.Options{Defines: s.Defines})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("config: %w", err)
		}
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	rc, err := cfg.Reader(section)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	s.rc = rc
	return rc, nil
}

// Open opens the data set. ctx carries cancellation and the scheduler (internal/sched) for
// the work formats do while opening, and object-storage reads made later; the source's own
// reads take the context of each call.
func (s *Spec) Open(ctx context.Context) (mlfeed.Source, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, err := s.withCache(ctx)
	if err != nil {
		return nil, err
	}
	if s.Mix != nil {
		return s.openMix(ctx)
	}
	if len(s.Deserializers) > 0 {
		if len(s.Paths) > 0 || s.Config != "" {
			return nil, fmt.Errorf("%w: deserializers take the place of paths and a config", format.ErrUsage)
		}
		return s.openDeserializers(ctx, s.Deserializers)
	}
	rc, err := s.Reader()
	if err != nil {
		return nil, err
	}
	if len(s.Paths) == 0 {
		if rc == nil {
			return nil, fmt.Errorf("%w: %w", format.ErrUsage, ErrNoInput)
		}
		// The configuration's files, each with its own streams and options; explicit inputs
		// replace every file's streams and explicit options override each file's.
		ds := make([]Deserializer, len(rc.Deserializers))
		for i, d := range rc.Deserializers {
			path, err := dataPath(&d)
			if err != nil {
				return nil, err
			}
			ds[i] = Deserializer{Path: path, Format: s.Format, Inputs: d.Options.Inputs, Params: merge(d.Options.Params, s.Params)}
			if ds[i].Format == "" {
				ds[i].Format = d.Format
			}
			if len(s.Inputs) > 0 {
				ds[i].Inputs = s.Inputs
			}
		}
		return s.openDeserializers(ctx, ds)
	}
	o, err := s.FormatOptions(ctx)
	if err != nil {
		return nil, err
	}
	return openPaths(ctx, s.Paths, rc.FormatFor(s.Paths, s.Format), o)
}

// NodeCache returns the node cache the Spec reads objects through (Cache, else the one
// MLFEED_CACHE names), or nil for none. Its Stats count what the process fetched. An error
// for a specification that does not parse wraps format.ErrUsage.
func (s *Spec) NodeCache() (*cache.Cache, error) {
	if s.Cache == "" {
		return cacheOf(context.Background())
	}
	c, err := cache.FromSpec(s.Cache)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return c, nil
}

// withCache returns ctx with the Spec's node cache.
func (s *Spec) withCache(ctx context.Context) (context.Context, error) {
	if s.Cache == "" {
		return ctx, nil
	}
	c, err := s.NodeCache()
	if err != nil {
		return nil, err
	}
	return WithCache(ctx, c), nil
}

// FormatOptions returns the format options the files of Paths are opened with: the explicit
// Inputs and Params over those of the configuration's deserializers (all of them: the
// streams of every one, and their reader keys).
func (s *Spec) FormatOptions(ctx context.Context) (*format.Options, error) {
	rc, err := s.Reader()
	if err != nil {
		return nil, err
	}
	o := s.options(ctx)
	if rc != nil {
		var inputs []mlfeed.Stream
		var params map[string]string
		for _, d := range rc.Deserializers {
			inputs = append(inputs, d.Options.Inputs...)
			params = merge(params, d.Options.Params)
		}
		if len(s.Inputs) == 0 {
			o.Inputs = inputs
		}
		o.Params = merge(params, s.Params)
	}
	return o, nil
}

// FormatFor returns the format name to read the files names as: Format when set, else, with
// a configuration, its reader type's for names whose format detection cannot tell (CNTK reads
// a file as its reader type says: CTF data named "train.cntk.sparse"), else "" (detect).
func (s *Spec) FormatFor(names []string) string {
	rc, _ := s.Reader()
	return rc.FormatFor(names, s.Format)
}

// options returns the format options every file is opened with, before a configuration's.
func (s *Spec) options(ctx context.Context) *format.Options {
	o := &format.Options{Inputs: s.Inputs, Params: s.Params, Log: s.Log, Context: ctx, Type: s.Type, Sequential: s.Sequential,
		OutsideShards: s.OutsideShards}
	if s.Config != "" {
		o.Config, _ = cntkconfig.SplitSection(s.Config)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// openDeserializers opens each file with its own streams and options and joins them as CNTK's
// composite reader joins its deserializers: by sequence id when every file has ids, else in
// order (files without ids are keyed by line).
func (s *Spec) openDeserializers(ctx context.Context, ds []Deserializer) (mlfeed.Source, error) {
	var srcs []mlfeed.Source
	for _, d := range ds {
		o := s.options(ctx)
		o.Inputs, o.Params = d.Inputs, d.Params
		src, err := openPaths(ctx, []string{d.Path}, d.Format, o)
		if err != nil {
			closeAll(srcs)
			return nil, err
		}
		srcs = append(srcs, src)
	}
	if len(srcs) == 1 {
		return srcs[0], nil
	}
	join, ids := mlfeed.Zip, true
	for _, src := range srcs {
		ids = ids && src.Schema().HasIDs
	}
	if ids {
		join = minibatch.Join
	}
	z, err := join(srcs...)
	if err != nil {
		closeAll(srcs)
		return nil, err
	}
	return z, nil
}

func closeAll(srcs []mlfeed.Source) {
	for _, s := range srcs {
		s.Close()
	}
}

// merge returns base with over's keys set, as a new map; either may be nil.
func merge(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// MinibatchConfig returns the minibatch engine's settings the Spec implies: the CNTK
// configuration's randomization, seed, window, frame mode and trace level, with the explicit
// Randomization fields over them. The other fields are the zero Config's, for the caller.
func (s *Spec) MinibatchConfig() (minibatch.Config, error) {
	var c minibatch.Config
	rc, err := s.Reader()
	if err != nil {
		return c, err
	}
	if rc != nil {
		c = rc.MinibatchConfig()
	}
	r := s.Randomization
	if r.Randomize != nil {
		c.NoRandomize = !*r.Randomize
	}
	if r.Seed != nil {
		c.RandomizationSeed = *r.Seed
	}
	if r.Window != nil {
		c.RandomizationWindow = *r.Window
	}
	if r.SampleWindow != nil {
		c.SampleBasedRandomizationWindow = *r.SampleWindow
	}
	if r.FrameMode != nil {
		c.FrameMode = *r.FrameMode
	}
	return c, nil
}

// dataPath returns the path of a configuration's own data file, or why there is none (a
// $Var$ it uses is not defined: a usage error; the file is in none of the places CNTK looks:
// an error wrapping os.ErrNotExist that lists them).
func dataPath(d *cntkconfig.Deserializer) (string, error) {
	p, err := d.DataPath()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return p, err
}

// Files returns the files the Spec reads, for reports and validation: Paths, else the
// deserializers' or the configuration's own data files.
func (s *Spec) Files() ([]string, error) {
	if len(s.Paths) > 0 {
		return s.Paths, nil
	}
	var names []string
	if s.Mix != nil {
		for _, in := range s.Mix.Sources {
			names = append(names, in.Paths...)
		}
		return names, nil
	}
	for _, d := range s.Deserializers {
		names = append(names, d.Path)
	}
	rc, err := s.Reader()
	if err != nil {
		return nil, err
	}
	if rc != nil && len(s.Deserializers) == 0 {
		for _, d := range rc.Deserializers {
			p, err := dataPath(&d)
			if err != nil {
				return nil, err
			}
			names = append(names, p)
		}
	}
	return names, nil
}

// FormatName returns the name of the format the Spec reads its files as (format.Format.Name),
// or "" when it cannot tell.
func (s *Spec) FormatName() string {
	if s.Format != "" {
		return s.Format
	}
	if len(s.Deserializers) > 0 {
		return s.Deserializers[0].Format
	}
	names, _ := s.Files()
	rc, _ := s.Reader()
	if f := rc.FormatFor(names, ""); f != "" {
		return f
	}
	ctx, err := s.withCache(context.Background())
	if err != nil {
		return ""
	}
	return formatOf(ctx, names)
}
