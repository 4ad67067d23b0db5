// Package format is the registry of mlfeed's file formats. Each format package (format/idx,
// format/ctf, ...) registers itself in an init function, as image/png does with package
// image; a program imports the formats it wants for their side effect:
//
//	import _ "github.com/mlfeed/mlfeed/format/idx"
//
// The registry detects a file's format from its first bytes (magic numbers) first and its name
// second; each Format opens sources and creates sinks. It imports only the data model and the
// standard library: opening data sets (directories, globs, manifests, object storage,
// combined inputs, CNTK configurations) is package dataset's.
package format

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sniff"
)

// ErrUsage is wrapped by errors that come from wrong options or arguments rather than bad
// data: an unknown parameter, a malformed --input declaration. The CLI exits with status 2.
var ErrUsage = errors.New("invalid usage")

// Warning marks err, passed to a Validate report function, as a warning: something worth
// knowing that does not make the file invalid (CTF: a value float32 cannot hold as its text
// states it). errors.Is and errors.As see through it to err.
func Warning(err error) error { return warningError{err} }

// IsWarning reports whether err was marked by Warning.
func IsWarning(err error) bool {
	var w warningError
	return errors.As(err, &w)
}

type warningError struct{ err error }

func (w warningError) Error() string { return "warning: " + w.err.Error() }
func (w warningError) Unwrap() error { return w.err }

// Options are the reader options every format receives. A format ignores what it has no use
// for, but rejects Params it does not know with an error wrapping ErrUsage.
type Options struct {
	// Inputs declares the streams to read, one meaning for every format: Name (the name the
	// data set exposes), Alias (the name in the file; empty means Name), Storage, Dim, Type,
	// DefinesMBSize. Formats whose files do not describe their streams (CTF) read what is
	// declared, or infer the streams when Inputs is nil; formats that do (CBF) check the
	// declarations against the file and expose the declared names. Others ignore it.
	Inputs []mlfeed.Stream
	// Config is the path of a CNTK configuration file whose reader section declares the
	// streams and options, for formats that use one.
	Config string
	// Params holds format-specific options as key=value pairs (CLI: --opt key=value), for
	// example "precision=double" for CTF. Each format documents its keys.
	Params map[string]string
	// Log receives warnings and information (CNTK's traceLevel output). Nil discards them.
	Log io.Writer
	// Context, if not nil, carries cancellation and the scheduler (internal/sched) for the
	// work a format does while opening: Matrix Market parses the whole file then, in pieces on
	// the scheduler's idle threads. Nil means context.Background(): on the caller alone.
	Context context.Context
	// Type is the element type the caller will convert numbers to (convert's Type), or
	// Invalid. Formats that choose the precision they read text at follow it: CTF reads at
	// double precision when it is Float64. Others ignore it.
	Type mlfeed.ElemType
	// Sequential says that the caller reads every chunk once, in order, while it writes the
	// chunks before (a conversion): a format whose default chunk size is only a unit of
	// reading may then cut smaller chunks, so that the last one, which nothing overlaps, is
	// short. A chunk size set in Params still applies. CTF cuts chunks of
	// ctf.SequentialChunkSize bytes of text; others ignore it.
	Sequential bool
	// OutsideShards lets the shards a data set's manifest names resolve, through symbolic
	// links, to regular files outside the data set's directory (the CLI's --outside-shards;
	// see shard.ResolveOptions). By default such a shard is an error naming it.
	OutsideShards bool
}

// WriteOptions are the writer options every format receives.
type WriteOptions struct {
	// Name is the output's final name (the file being written is a temporary beside it), for
	// formats whose defaults follow the name: ".idx.gz" compresses.
	Name string
	// Compress selects compression where the format has a choice: "gzip" (IDX), "deflate",
	// "none". Empty means the format's default (or what the output name implies, .idx.gz).
	Compress string
	// Compat names a reference implementation whose exact output to reproduce, quirks
	// included: "ctf2bin" for CBF. Empty means mlfeed's own, sane behaviour.
	Compat string
	// ChunkSize is the target chunk or block size in bytes for formats that cut chunks (CBF).
	// Zero means the format's default.
	ChunkSize int64
	// Sequences is the total number of sequences that will be written, when the caller knows
	// it (a source's chunk table does). Zero means unknown. Formats whose header states the
	// count (IDX) use it to stream without seeking back.
	Sequences int64
	// Params holds format-specific options as key=value pairs; see Options.Params.
	Params map[string]string
	// Context, if not nil, carries cancellation and the scheduler (internal/sched) for the
	// work a writer does: IDV compresses the columns of a block on the scheduler's idle
	// threads. Nil means context.Background(): on the caller alone. Package convert sets it.
	Context context.Context
}

// Format describes one registered file format.
type Format struct {
	// Name is the short name used by --to and shown by info ("idx", "ctf", ...).
	Name string
	// Extensions are the file name endings that select the format for output and, when no
	// magic matches, for input (".idx", ".idx.gz"). Longest match wins. The first is the one
	// outputs are named with (Ext). A directory format (IsDir) has none.
	Extensions []string
	// Match reports whether a file starting with head (up to 512 bytes) is in this format.
	// Nil for formats without magic bytes (CTF).
	Match func(head []byte) bool
	// MatchFile, if set, looks deeper into a file whose head Match accepted, for formats that
	// share their magic bytes with another: Binsparse claims only the HDF5 files that hold a
	// Binsparse descriptor, and detection goes on to the next format whose Match accepts the
	// head (hdf5) when MatchFile declines.
	MatchFile func(r io.ReaderAt, size int64) bool
	// Open opens a file as a source. name may carry a format-specific suffix
	// (Binsparse: "file.bsp.h5:/group").
	Open func(name string, opts *Options) (mlfeed.Source, error)
	// OpenReader, if set, opens the size bytes of r as a source, reading only the ranges it
	// needs; name is used in errors. Objects in object storage are opened this way; formats
	// without it are copied to a temporary file first and opened with Open.
	OpenReader func(r io.ReaderAt, size int64, name string, opts *Options) (mlfeed.Source, error)
	// Create returns a sink writing to w. For a Streamable format w may be any writer
	// (standard output, a pipe). Otherwise w is an *os.File open on an empty, seekable regular
	// file (the temporary file that package convert renames into place after the sink's
	// Close), and formats that write through a library may reopen its Name(); SeekableFile
	// checks this.
	Create func(w io.Writer, schema mlfeed.Schema, opts *WriteOptions) (mlfeed.Sink, error)
	// KeepsShape reports that Create stores a stream's multi-axis Shape (an image's 28x28),
	// so that reading the output gives it back. A format without it stores each sample as a
	// flat vector of Dim values; package convert says so in its log.
	KeepsShape bool
	// Streamable reports that Create writes its output front to back, never seeking nor
	// reopening it, so that it can go to standard output or a pipe.
	Streamable bool
	// NeedsCount reports that Create writes straight through only when WriteOptions.Sequences
	// gives the number of sequences (IDX states it in its header; without it the sink spools
	// the data and copies it after), so that package convert makes the chunk table of a source
	// that has none yet (see mlfeed.NumChunks) for it.
	NeedsCount bool
	// RawSamples reports that the format's reader lets the minibatch engine gather the
	// samples of a file whose every stream is dense straight from its mapping
	// (mlfeed.RawSampler) rather than decode it chunk by chunk. Package convert writes such
	// outputs so that the page cache keeps them in huge pages.
	RawSamples bool
	// ReadParams and WriteParams declare the format-specific options Options.Params and
	// WriteOptions.Params take (CLI: --opt and --write-opt), for `mlfeed formats` and for
	// NormalizeParams.
	ReadParams, WriteParams []Param
	// MatchDir, if set, reports whether the directory dir is one data set of this format as a
	// whole (MosaicML MDS: index.json and the shards it lists) rather than a directory of
	// shards each opened alone. Open then takes the directory's name. Package dataset asks it
	// before it treats a directory as shards (DetectDir).
	MatchDir func(dir string) bool
	// CreateDir, if set, writes the format's output as a directory of files (MDS: shards and
	// index.json) rather than one file: it returns a sink writing into dir, an empty directory
	// that package convert renames into place after the sink's Close. A format has Create or
	// CreateDir.
	CreateDir func(dir string, schema mlfeed.Schema, opts *WriteOptions) (mlfeed.Sink, error)
	// Validate, if set, checks a file more strictly than reading does and reports every
	// problem found to report, stopping when report returns false. It returns an error only
	// when it cannot check at all. Nil means: open the file and read every chunk.
	Validate func(name string, opts *Options, report func(error) bool) error
}

var formats []*Format

// Register makes a format available. It panics if the name is taken, if a file format has
// no Extensions, or if a directory format (IsDir) has Extensions or Create.
func Register(f Format) {
	if _, ok := Lookup(f.Name); ok {
		panic("format: " + f.Name + " registered twice")
	}
	if f.IsDir() && (len(f.Extensions) > 0 || f.Create != nil) {
		panic("format: " + f.Name + " is a directory format with a file's Extensions or Create")
	}
	if !f.IsDir() && len(f.Extensions) == 0 {
		panic("format: " + f.Name + " has no Extensions")
	}
	formats = append(formats, &f)
	sort.Slice(formats, func(i, j int) bool { return formats[i].Name < formats[j].Name })
}

// All returns the registered formats, sorted by name.
func All() []*Format { return formats }

// Lookup returns the format called name.
func Lookup(name string) (*Format, bool) {
	for _, f := range formats {
		if f.Name == strings.ToLower(name) {
			return f, true
		}
	}
	return nil, false
}

// ByExtension returns the format whose extension ends path, preferring the longest.
func ByExtension(path string) (*Format, bool) {
	var best *Format
	bestLen := 0
	lower := strings.ToLower(path)
	for _, f := range formats {
		for _, e := range f.Extensions {
			if strings.HasSuffix(lower, e) && len(e) > bestLen {
				best, bestLen = f, len(e)
			}
		}
	}
	return best, best != nil
}

// SplitPath separates a format-specific suffix such as ":/group/name" from a file name when
// name itself does not exist but the part before the last ":/" does.
func SplitPath(name string) (file, inner string) {
	if _, err := os.Stat(name); err == nil {
		return name, ""
	}
	if i := strings.LastIndex(name, ":/"); i > 0 {
		if _, err := os.Stat(name[:i]); err == nil {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// Detect returns the format of the named file: from its first bytes when a format's magic
// matches, else from its name.
func Detect(name string) (*Format, error) {
	file, _ := SplitPath(name)
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return DetectHead(head[:n], f, fi.Size(), file)
}

// DetectHead returns the format of data that starts with head (its first 512 bytes, or all
// of it when shorter) and is called name: the first format whose magic matches, else the one
// its name's extension says. r holds its size bytes, for the formats that look deeper
// (Format.MatchFile).
func DetectHead(head []byte, r io.ReaderAt, size int64, file string) (*Format, error) {
	for _, ft := range formats {
		if ft.Match != nil && ft.Match(head) && (ft.MatchFile == nil || ft.MatchFile(r, size)) {
			return ft, nil
		}
	}
	if ft, ok := ByExtension(file); ok {
		return ft, nil
	}
	if sniff.IsGzip(head) {
		return nil, fmt.Errorf("%s: %w: gzip data of no format mlfeed knows", file, mlfeed.ErrUnknownFormat)
	}
	return nil, fmt.Errorf("%s: %w (known: %s)", file, mlfeed.ErrUnknownFormat, strings.Join(Names(), ", "))
}

// DetectDir returns the format whose MatchDir claims the directory dir, or nil.
func DetectDir(dir string) *Format {
	for _, ft := range formats {
		if ft.MatchDir != nil && ft.MatchDir(dir) {
			return ft
		}
	}
	return nil
}

// Writable reports whether the format writes output, as a file (Create) or a directory
// (CreateDir).
func (f *Format) Writable() bool { return f.Create != nil || f.CreateDir != nil }

// IsDir reports whether a data set of the format is a directory rather than one file
// (MosaicML MDS: index.json and the shards it lists): MatchDir or CreateDir is set. Such a
// format has no Extensions and no Create, so it writes through CreateDir when Writable.
func (f *Format) IsDir() bool { return f.MatchDir != nil || f.CreateDir != nil }

// Ext returns the ending an output of the format is named with: its first extension, or ""
// for a directory format (IsDir), whose output is a directory named as given.
func (f *Format) Ext() string {
	if f.IsDir() {
		return ""
	}
	return f.Extensions[0]
}

// Names returns the registered format names.
func Names() []string {
	var n []string
	for _, f := range formats {
		n = append(n, f.Name)
	}
	return n
}

// ParseInput parses a stream declaration NAME:dense|sparse:DIM[:ALIAS[:TYPE]] as given to
// --input, for example "features:dense:784" or "labels:sparse:10:L". TYPE is an element type
// name (default float32).
func ParseInput(s string) (mlfeed.Stream, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 5 || parts[0] == "" {
		return mlfeed.Stream{}, fmt.Errorf("%w: stream declaration %q: want NAME:dense|sparse:DIM[:ALIAS[:TYPE]]", ErrUsage, s)
	}
	st := mlfeed.Stream{Name: parts[0], Type: mlfeed.Float32}
	switch strings.ToLower(parts[1]) {
	case "dense":
		st.Storage = mlfeed.Dense
	case "sparse":
		st.Storage = mlfeed.Sparse
	default:
		return st, fmt.Errorf("%w: stream declaration %q: storage must be dense or sparse, not %q", ErrUsage, s, parts[1])
	}
	dim, err := strconv.Atoi(parts[2])
	if err != nil || dim <= 0 {
		return st, fmt.Errorf("%w: stream declaration %q: dimension must be a positive integer, not %q", ErrUsage, s, parts[2])
	}
	st.Dim = dim
	if len(parts) > 3 && parts[3] != "" && parts[3] != parts[0] {
		st.Alias = parts[3]
	}
	if len(parts) > 4 {
		if st.Type, err = mlfeed.ParseElemType(parts[4]); err != nil {
			return st, fmt.Errorf("%w: stream declaration %q: %v", ErrUsage, s, err)
		}
	}
	return st, nil
}

// Param declares one format-specific option key. Keys are lower snake_case, the same name for
// the same idea in every format (chunk_size, keep_in_memory, level, name, ...).
type Param struct {
	// Name is the key.
	Name string
	// Doc says what the option does, its values and its default, in one line.
	Doc string
	// Aliases are other spellings accepted for the key: CNTK's reader option names
	// (chunkSizeInBytes, keepDataInMemory), which CNTK configurations use.
	Aliases []string
	// Selects marks an option that picks some of a file's streams (Parquet's and Arrow's
	// columns, an .npz's arrays, HDF5's datasets). A data set of shards whose manifest lists
	// every stream is read with it by opening each shard to learn its streams, as a directory
	// without a manifest is, rather than from the manifest's schema and chunk table.
	Selects bool
}

// Selecting returns the name of an option among params that the format named declares with
// Param.Selects, or "" when there is none (or no such format).
func Selecting(formatName string, params map[string]string) string {
	ft, err := Resolve(formatName)
	if err != nil || len(params) == 0 {
		return ""
	}
	for _, p := range ft.ReadParams {
		if !p.Selects {
			continue
		}
		for _, k := range append([]string{p.Name}, p.Aliases...) {
			if _, ok := params[k]; ok {
				return p.Name
			}
		}
	}
	return ""
}

// NormalizeParams checks params against the declared keys and returns them under their
// names, an alias given renamed to its key. A key that is not declared, or one given under two
// spellings, is an error wrapping ErrUsage. A nil or empty params gives nil.
func NormalizeParams(format string, params map[string]string, decl []Param) (map[string]string, error) {
	if len(params) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(params))
	for k, v := range params {
		name := ""
		for _, p := range decl {
			if k == p.Name || slices.Contains(p.Aliases, k) {
				name = p.Name
				break
			}
		}
		if name == "" {
			if len(decl) == 0 {
				return nil, fmt.Errorf("%w: %s takes no format options, got %q", ErrUsage, format, k)
			}
			names := make([]string, len(decl))
			best, bestD := "", 3 // a declared key within two edits: the one meant
			for i, p := range decl {
				names[i] = p.Name
				if d := editDistance(strings.ToLower(k), p.Name); d < bestD {
					best, bestD = p.Name, d
				}
			}
			if best != "" {
				return nil, fmt.Errorf("%w: %s has no option %q; did you mean %s? (known: %s)", ErrUsage, format, k, best, strings.Join(names, ", "))
			}
			return nil, fmt.Errorf("%w: %s has no option %q (known: %s)", ErrUsage, format, k, strings.Join(names, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: %s option %s given twice (under two spellings)", ErrUsage, format, name)
		}
		out[name] = v
	}
	return out, nil
}

// ErrNeedsSeek is wrapped (with ErrUsage) by the error of a format that is not Streamable
// asked to write to something other than a regular file.
var ErrNeedsSeek = errors.New("needs a seekable regular file")

// SeekableFile returns w as the *os.File that Create receives for a format that is not
// Streamable, or an error wrapping ErrUsage and ErrNeedsSeek.
func SeekableFile(format string, w io.Writer) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: %s output %w (not standard output, a pipe or a device)", ErrUsage, format, ErrNeedsSeek)
}

// UsageErrorf returns an error wrapping ErrUsage, for formats rejecting an option value.
func UsageErrorf(f string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(f, args...))
}

// Resolve returns the format a user names: by its name ("hdf5"), or by an extension that one
// format alone claims, with or without its dot ("h5", ".h5"). An unknown name is an error
// wrapping mlfeed.ErrUnknownFormat that lists the known names and suggests the nearest.
func Resolve(name string) (*Format, error) {
	if f, ok := Lookup(name); ok {
		return f, nil
	}
	ext := strings.ToLower(name)
	if !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	var claim []*Format
	for _, f := range formats {
		if slices.Contains(f.Extensions, ext) {
			claim = append(claim, f)
		}
	}
	if len(claim) == 1 {
		return claim[0], nil
	}
	msg := fmt.Sprintf("%q (known: %s)", name, strings.Join(Names(), ", "))
	if s := nearest(strings.ToLower(name)); s != "" {
		msg = fmt.Sprintf("%q; did you mean %s? (known: %s)", name, s, strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("%w: %s", mlfeed.ErrUnknownFormat, msg)
}

// nearest returns the registered name closest to name (within two edits, or a name that
// contains it or is contained in it), or "".
func nearest(name string) string {
	best, bestD := "", 3
	for _, f := range formats {
		d := editDistance(name, f.Name)
		if strings.Contains(f.Name, name) || strings.Contains(name, f.Name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Writable describes the formats that write, one per line: "  name  .ext1 .ext2", for help
// texts.
func Writable() string {
	var b strings.Builder
	for _, f := range formats {
		if !f.Writable() {
			continue
		}
		fmt.Fprintf(&b, "  %-10s %s\n", f.Name, strings.Join(f.Extensions, " "))
	}
	return b.String()
}
