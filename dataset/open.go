package dataset

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/shard"
	"github.com/mlfeed/mlfeed/storage"
)

// openPaths opens one or more inputs as a single source. Each file's format is detected (or
// forced by formatName when not empty). Several inputs are combined with mlfeed.Zip; stream
// names that repeat across them get a suffix ("features_2").
func openPaths(ctx context.Context, names []string, formatName string, opts *format.Options) (mlfeed.Source, error) {
	var srcs []mlfeed.Source
	for _, name := range names {
		s, err := openOne(ctx, name, formatName, opts)
		if err != nil {
			closeAll(srcs)
			return nil, err
		}
		srcs = append(srcs, s)
	}
	if len(srcs) > 1 {
		srcs = uniqueNames(srcs)
		// Inputs combine when they hold one record set: as many sequences each. Say which
		// inputs differ, by the names the caller gave.
		n0, _ := mlfeed.Totals(srcs[0].Chunks())
		for i, src := range srcs[1:] {
			if n, _ := mlfeed.Totals(src.Chunks()); n != n0 {
				closeAll(srcs)
				return nil, fmt.Errorf("%w: %s holds %d sequences and %s %d: inputs combine into one data set only when they hold as many (one record set in several files, as MNIST's images and labels)", mlfeed.ErrFormat, names[0], n0, names[i+1], n)
			}
		}
	}
	z, err := mlfeed.Zip(srcs...)
	if err != nil {
		closeAll(srcs)
		return nil, err
	}
	return z, nil
}

// resolveOptions returns the options shard.ResolveWith takes for format options opts (nil:
// the defaults).
func resolveOptions(opts *format.Options) *shard.ResolveOptions {
	if opts == nil {
		return nil
	}
	return &shard.ResolveOptions{AllowOutside: opts.OutsideShards}
}

// lookup returns the format a user names (format.Resolve).
func lookup(name string) (*format.Format, error) { return format.Resolve(name) }

// openOne opens one input argument: a file, an object, or a data set of shards (a directory,
// a glob or a manifest, local or under an object-storage prefix; see package shard).
func openOne(ctx context.Context, name, formatName string, opts *format.Options) (mlfeed.Source, error) {
	if storage.IsURL(name) {
		return openURL(ctx, name, formatName, opts)
	}
	if ft := dirFormat(name, formatName); ft != nil {
		return ft.Open(name, opts)
	}
	paths, m, sharded, err := shard.ResolveWith(name, resolveOptions(opts))
	if err != nil {
		return nil, err
	}
	if m != nil && formatName == "" {
		// A format the manifest names and this build does not know is a fault of the data
		// set (exit 1), not of the caller's usage as an unknown --format is.
		if _, err := lookup(m.Format); err != nil {
			return nil, fmt.Errorf("%s: %w: the manifest's format: %v", name, shard.ErrManifest, err)
		}
		formatName = m.Format
	}
	open := opener(formatName, opts)
	if !sharded {
		return open(name)
	}
	return shard.NewSource(paths, selectingManifest(m, formatName, opts), open)
}

// selectingManifest returns m, or nil when opts hold an option of the format that picks
// streams (format.Param.Selects): the manifest lists every stream, and the shards opened with
// that option hold some, so each shard is opened to learn its streams and chunk table.
func selectingManifest(m *shard.Manifest, formatName string, opts *format.Options) *shard.Manifest {
	if m == nil || opts == nil {
		return m
	}
	if formatName == "" {
		formatName = m.Format
	}
	if format.Selecting(formatName, opts.Params) != "" {
		return nil
	}
	return m
}

// dirFormat returns the format that reads the directory name as one data set (format.DetectDir:
// MosaicML MDS), when formatName is empty or names that format; nil for anything else.
func dirFormat(name, formatName string) *format.Format {
	ft := format.DetectDir(name)
	if ft == nil || (formatName != "" && !strings.EqualFold(formatName, ft.Name)) {
		return nil
	}
	return ft
}

// opener opens a file in the format named (detected when "") with opts.
func opener(formatName string, opts *format.Options) shard.Opener {
	return func(p string) (mlfeed.Source, error) {
		var ft *format.Format
		var err error
		if formatName == "" {
			ft, err = format.Detect(p)
		} else {
			ft, err = lookup(formatName)
		}
		if err != nil {
			return nil, err
		}
		return ft.Open(p, opts)
	}
}

// CheckShards checks the sharded data set arg names (a directory with a manifest, or a
// manifest) as a reader would, shard by shard: the manifest's format is one this build
// knows, every shard is a regular file inside the data set's directory, opens in that
// format, and has the manifest's streams, types and chunk table. Each problem goes to
// report; it returns their number. An error means it could not check (arg is no data set).
// Another input (a file, a directory without a manifest) is not checked here: 0, nil.
func CheckShards(arg, formatName string, opts *format.Options, report func(error)) (int, error) {
	paths, m, sharded, err := shard.ResolveWith(arg, resolveOptions(opts))
	if err != nil {
		return 0, err
	}
	if !sharded || m == nil {
		return 0, nil
	}
	if formatName == "" {
		if _, err := lookup(m.Format); err != nil {
			report(fmt.Errorf("%s: %w: the manifest's format: %w", arg, shard.ErrManifest, err))
			return 1, nil
		}
		formatName = m.Format
	}
	if opts == nil {
		opts = &format.Options{}
	}
	if sel := format.Selecting(formatName, opts.Params); sel != "" {
		// The shards are checked as written, every stream the manifest lists.
		o := *opts
		o.Params = maps.Clone(opts.Params)
		delete(o.Params, sel)
		opts = &o
	}
	src, err := shard.NewSource(paths, m, opener(formatName, opts))
	if err != nil {
		report(err)
		return 1, nil
	}
	defer src.Close()
	return src.Check(report), nil
}

// ValidateArg prepares validate's check of one argument: a sharded data set with a manifest
// is checked against its shards (their sizes and SHA-256, shard.Verify, then, when those
// match, as a reader would, CheckShards), each problem going to report. It returns the files
// to validate one by one (the shards, or arg itself) and the number of problems found; an
// error means that arg names nothing to check (a directory holding no shards, a manifest
// that does not decode). A directory that is one data set of its own format (MDS) is
// validated whole, as arg.
func ValidateArg(arg, formatName string, opts *format.Options, report func(error)) (files []string, problems int, err error) {
	if dirFormat(arg, formatName) != nil {
		return []string{arg}, 0, nil
	}
	paths, m, sharded, err := shard.ResolveWith(arg, resolveOptions(opts))
	if err != nil {
		return nil, 0, err
	}
	if sharded && m != nil {
		dir := arg
		if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
			dir = filepath.Dir(arg)
		}
		if problems = shard.Verify(dir, m, report); problems == 0 {
			if problems, err = CheckShards(arg, formatName, opts, report); err != nil {
				report(err)
				problems = 1
			}
		}
	}
	return paths, problems, nil
}

// uniqueNames renames streams whose names repeat an earlier source's.
func uniqueNames(srcs []mlfeed.Source) []mlfeed.Source {
	seen := map[string]int{}
	out := make([]mlfeed.Source, len(srcs))
	for i, s := range srcs {
		sc := s.Schema()
		renamed := false
		for j := range sc.Streams {
			n := sc.Streams[j].Name
			seen[n]++
			if seen[n] > 1 {
				if !renamed {
					sc.Streams = append([]mlfeed.Stream(nil), sc.Streams...)
					renamed = true
				}
				sc.Streams[j].Name = n + "_" + strconv.Itoa(seen[n])
			}
		}
		out[i] = s
		if renamed {
			out[i] = renamedSource{s, sc}
		}
	}
	return out
}

type renamedSource struct {
	mlfeed.Source
	schema mlfeed.Schema
}

func (r renamedSource) Schema() mlfeed.Schema { return r.schema }

// NumChunks passes on the source's count (mlfeed.NumChunks).
func (r renamedSource) NumChunks() int { return mlfeed.NumChunks(r.Source) }

// RawSamples passes on where the source describes its samples (mlfeed.RawSampler).
func (r renamedSource) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if rs, is := r.Source.(mlfeed.RawSampler); is {
		return rs.RawSamples(i, stream)
	}
	return nil, 0, 0, 0, false
}

// FormatOf names the format of the inputs for reports: the detected format of each input (a
// sharded input's from its manifest or first shard, an object's from its first bytes), joined
// with "+" when they differ, "" for an input it cannot tell.
func FormatOf(names []string) string { return formatOf(context.Background(), names) }

// formatOf is FormatOf with objects read under ctx (with its node cache).
func formatOf(ctx context.Context, names []string) string {
	var fs []string
	for _, n := range names {
		if f := formatOfOne(ctx, n); f != "" {
			fs = append(fs, f)
		}
	}
	same := true
	for _, f := range fs {
		same = same && f == fs[0]
	}
	if len(fs) > 1 && same {
		return fs[0]
	}
	return strings.Join(fs, "+")
}

func formatOfOne(ctx context.Context, name string) string {
	if storage.IsURL(name) {
		return objectFormatName(ctx, name)
	}
	if ft := dirFormat(name, ""); ft != nil {
		return ft.Name
	}
	// The name only: a manifest's format is read from it, whatever its shards link to (opening
	// them checks that).
	paths, m, _, err := shard.ResolveWith(name, &shard.ResolveOptions{AllowOutside: true})
	switch {
	case err != nil:
	case m != nil:
		return m.Format
	case len(paths) > 0:
		if ft, err := format.Detect(paths[0]); err == nil {
			return ft.Name
		}
	}
	return ""
}

// OpenFiles opens names (files, shards, URLs, as Spec.Paths) as one source with the format
// options given, the format forced by formatName or detected when it is "". It is Spec.Open
// without a CNTK configuration, for callers that hold format.Options already; opts may be nil,
// and its Context (nil: context.Background()) is the one Spec.Open takes.
func OpenFiles(names []string, formatName string, opts *format.Options) (mlfeed.Source, error) {
	if opts == nil {
		opts = &format.Options{}
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return openPaths(ctx, names, formatName, opts)
}
