// Package ctf reads and writes the CNTK Text Format (CTF), the text format of the Microsoft
// Cognitive Toolkit's CNTKTextFormatReader.
//
// A CTF file holds one sample per line. A line optionally starts with a sequence id (ASCII
// digits), followed by samples, each an input name after a pipe and its values:
//
//	0 |features 0.5 1 -2e-3 |labels 3:1
//	0 |features 0.1 0 7
//	1 |features 2 2 2 |# a comment, up to the next pipe or the end of the line
//
// Dense samples list their values; sparse samples list index:value pairs. Lines with the same
// id, or without an id, continue the current sequence. A file whose first byte is a pipe has
// no ids: every line is a sequence of one sample.
//
// # Reading
//
// The Reader follows CNTK's reader wherever CNTK's behaviour is observable: the same grammar
// (number syntax, name rules, comments, byte classes, BOM, CRLF), the same index (sequence
// boundaries, sample counts, chunking by chunkSizeInBytes), the same recovery from malformed
// input under maxErrors, and, at traceLevel 1 and 2, the same warning and info messages, byte
// offsets included. Opening a file builds the index alone (no number is parsed); ReadChunk
// parses one chunk on the calling goroutine and may be called from several goroutines. The
// Reader starts no goroutines: a chunk of 1 MiB or more is parsed in pieces on the idle
// threads of the scheduler the caller's context carries (internal/sched), and reading ahead
// is the scheduler's (ReadChunks uses it). Files are memory-mapped, so a file larger than
// memory is read chunk by chunk.
//
// The streams come from ReaderOptions.Inputs (the CLI's --input flags, or a CNTK config's input section
// mapped by the caller). Without them the Reader infers the streams by a scan of the file: one
// stream per input name, in order of first appearance, sparse if any of its samples holds an
// index:value pair, with the largest sample size or index seen as its dimension.
//
// An id used again after other ids starts a new sequence with the same id, as in CNTK; at
// TraceLevel 1 and above a warning names it. Every read sequence has its id in Chunk.IDs when the file has ids (Schema.HasIDs), as a
// decimal string. ChunkInfo.Samples is CNTK's index sample count: the lines a sequence spans,
// or, with a definesMBSize stream, the lines that mention that stream.
//
// # Deliberate differences from CNTK
//
//   - Numbers are converted with correct rounding to float64 (as strconv.ParseFloat does) and
//     then to float32 for precision=float, as ctf2bin.py does. CNTK's own digit-by-digit
//     arithmetic can differ from this in the last bit for long mantissas.
//   - Precision as CNTK has it, and loud: declared streams are float32 unless a precision is
//     chosen, and a value float32 does not hold as its text states it (more significant digits
//     than its float32 keeps, such as Python's 0.07670275135766862) is rounded to the nearest
//     float32, as CNTK reads it. The Reader counts such values per stream and writes one
//     warning per stream (how many, the first at its line and column) to Log when closed;
//     Rounded returns the same, and Validate reports it as a format.Warning. What rounding
//     would lose is an error wrapping ErrOutOfRange in every float32 mode: a finite value
//     beyond float32's range (it would read as ±Inf) or a nonzero one below it (it would read
//     as 0); a nonzero value below float64's range (1e-400) too, unless a precision is chosen.
//     Exact (precision=exact) refuses rounding with an error wrapping ErrRounded;
//     precision=float (Float32) rounds without a word. When the streams are inferred, the
//     scan that infers them also infers the precision: float64 if any value needs it (Details
//     reports it), so nothing is rounded. Values of up to six significant digits in float32's
//     range always fit, as do values float32 holds exactly; float64 holds what 17 significant
//     digits state.
//   - A sparse index twice in one sample (|x 3:1 3:2) is a bad sample at the second one's
//     line and column (CNTK keeps both values, and packed dense the later wins); the Writer
//     refuses such a sample too.
//   - maxErrors is a budget per pass over the file, not per process lifetime: a chunk's errors
//     count once, however often the chunk is read again.
//   - Errors returned to the caller name the file, line and column and say what was expected;
//     CNTK's own message ("Reached the maximum number of allowed errors ...", "Malformed input
//     file. Bailing out.") is kept at the end of the text. The log messages keep CNTK's text and
//     byte offsets exactly.
//   - Parsing is not retried (CNTK retries a failing chunk 5 times with 1 s sleeps).
//   - A dense sample on the last line of a file without a final newline is zero-padded and
//     size-checked like any other (CNTK skips both checks there).
//   - Sequence ids above 2^64-1 are fatal with a clear message, as in CNTK, but detected exactly.
//   - The index cache (cacheIndex) uses CNTK's file name and layout and is written
//     synchronously; besides CNTK's modification-time check, a cache whose records do not fit
//     the file is ignored.
//
// # Validation
//
// Validate (mlfeed validate) is strict where reading is lenient, and lists every problem with
// file:line:column: undeclared input names, dense samples shorter than their dimension, an
// input twice on a line, a sequence id reused after other ids, stray control or non-ASCII
// bytes, as well as everything reading counts as an error.
//
// # Writing
//
// The Writer writes any source whose streams hold numbers: dense or sparse per stream, names
// from the streams' aliases, sequence ids when the source has them (or when a sequence has
// several samples), numbers in the shortest form that reads back to the same float32 or
// float64 (every float64 bit survives the text), integers as integers up to 2^53 in magnitude
// (the most a reader's float64 holds exactly; larger ones are an error). CTF has no spelling
// for infinities and NaN: infinities are written as ±1e999, which reads back as ±Inf; NaN
// cannot be written.
package ctf

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

var (
	// ErrFormat is wrapped by errors for data that is not valid CTF.
	ErrFormat = fmt.Errorf("ctf: %w", mlfeed.ErrFormat)
	// ErrUnsupported is wrapped by errors for data CTF cannot hold (text values, NaN, names
	// with spaces) and for unsupported options.
	ErrUnsupported = fmt.Errorf("ctf: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge is wrapped by errors for sequences larger than CNTK's 4 GiB limit.
	ErrTooLarge = fmt.Errorf("ctf: %w", mlfeed.ErrTooLarge)
)

// DefaultChunkSize is CNTK's default chunkSizeInBytes: 32 MiB.
const DefaultChunkSize = 32 << 20

// SequentialChunkSize is the chunk size the registry's Open uses when the caller reads the
// chunks once, in order (format.Options.Sequential), and sets none: a conversion writes a
// chunk while the next ones are parsed, and the last chunk's writing, which no parsing
// overlaps, takes an eighth of the time it would with DefaultChunkSize.
const SequentialChunkSize = 4 << 20

// ReaderOptions are the reader options. The zero value reads float32 values (float64 when
// inferred streams need it, see the package documentation) with streams inferred from the
// file, no error tolerance, no log, and CNTK's default chunk size. The names follow CNTK's
// reader configuration; ReadParams lists their key=value form.
type ReaderOptions struct {
	// FileName names the data in messages and positional errors, and is the base name of
	// the index cache (CacheIndex). Open sets it to the file's path when empty.
	FileName string
	// Inputs declares the streams: Name, Alias (the name in the file; empty means Name),
	// Storage, Dim and DefinesMBSize (at most one). Nil infers them by a scan of the file.
	// A stream's Type may be Float32 or Float64; a Float64 stream makes every stream Float64,
	// as precision=double does (CTF has one precision per reader, as in CNTK).
	Inputs []mlfeed.Stream
	// Precision is the element type of every stream: Float32 or Float64 (CNTK's
	// precision=double). Invalid, the zero value, reads float32 as CNTK does, rounding values
	// float32 does not hold as written and reporting them to Log, one warning per stream
	// (inferred streams are float64 when a value needs it): see the package documentation.
	// Float32 rounds without a word.
	Precision mlfeed.ElemType
	// Exact, with Precision Invalid, refuses a value float32 would round instead of rounding
	// it (precision=exact): an error wrapping ErrRounded at its line and column.
	Exact bool
	// SkipSequenceIDs treats every line as a sequence of one sample even when lines start
	// with ids (CNTK's skipSequenceIds).
	SkipSequenceIDs bool
	// MaxErrors is the number of recoverable errors tolerated in one pass over the file
	// (malformed samples are dropped, bad rows skipped). Zero, the default, fails on the
	// first one.
	MaxErrors int
	// TraceLevel selects the messages written to Log: 0 errors only (the zero value), 1 also
	// warnings (CNTK's default, which the format registry applies), 2 also information.
	TraceLevel int
	// ChunkSize is the target byte span of a chunk (CNTK's chunkSizeInBytes); chunks end on
	// sequence boundaries and a larger sequence gets a chunk of its own. Zero means
	// DefaultChunkSize.
	ChunkSize int64
	// KeepDataInMemory keeps every parsed chunk, so that each chunk is parsed once.
	KeepDataInMemory bool
	// FrameMode requires every sequence to have exactly one sample (CNTK's frameMode).
	FrameMode bool
	// Sequential says that the caller reads every chunk once, in order (format.Options.Sequential,
	// as a conversion does): a mapped file's pages are then unmapped once their chunk is parsed
	// (they stay in the page cache), so that Close has little left to unmap.
	Sequential bool
	// CacheIndex stores the index beside the file, in CNTK's layout and under CNTK's name
	// (FILE.<alias or _>.<0|1>.0.0.v1.cache), and reuses it while it is newer than the file.
	CacheIndex bool
	// Log receives the warning and information messages that TraceLevel selects, in CNTK's
	// wording. Nil discards them.
	Log io.Writer
	// Context, if not nil, carries the scheduler (internal/sched) whose idle threads index
	// a large file in pieces while it is opened. Nil: the opening goroutine indexes alone.
	Context context.Context
}

// Options is the former name of ReaderOptions.
//
// Deprecated: use ReaderOptions.
type Options = ReaderOptions

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE),
// with CNTK's reader option names, which CNTK configurations use, as aliases.
var ReadParams = []format.Param{
	{Name: "precision", Doc: "float, double or exact: the element type of every stream (default: float32 as in CNTK, values rounded with one warning per stream, or double when inferred streams hold values float32 cannot); float rounds silently; exact refuses rounding"},
	{Name: "skip_sequence_ids", Doc: "true: every line is a sequence of one sample, ids or not (default false)", Aliases: []string{"skipSequenceIds"}},
	{Name: "max_errors", Doc: "recoverable errors tolerated in one pass over the file (default 0)", Aliases: []string{"maxErrors"}},
	{Name: "trace_level", Doc: "0 errors, 1 also warnings (default), 2 also information, to standard error", Aliases: []string{"traceLevel"}},
	{Name: "chunk_size", Doc: "target chunk size in bytes of text, or SIZE_MAX (default 33554432)", Aliases: []string{"chunkSizeInBytes"}},
	{Name: "keep_in_memory", Doc: "true: keep every parsed chunk, parsing each once (default false)", Aliases: []string{"keepDataInMemory"}},
	{Name: "frame_mode", Doc: "true: every sequence must have one sample (default false)", Aliases: []string{"frameMode"}},
	{Name: "cache_index", Doc: "true: keep the index in a cache file beside the input, CNTK's (default false)", Aliases: []string{"cacheIndex"}},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "ids", Doc: "auto (default: the source's ids, numbers when sequences have several samples), number or none"},
}

// ParseParams applies format options given as key=value pairs (ReadParams; CNTK's names are
// accepted too) to o. Booleans accept CNTK's spellings (true, t, 1, false, f, 0, ...).
// Unknown keys and bad values are errors wrapping format.ErrUsage.
func ParseParams(o *ReaderOptions, params map[string]string) error {
	params, err := format.NormalizeParams("ctf", params, ReadParams)
	if err != nil {
		return err
	}
	bad := func(k, v, want string) error {
		return fmt.Errorf("%w: ctf option %s=%q: want %s", format.ErrUsage, k, v, want)
	}
	for k, v := range params {
		var err error
		switch k {
		case "precision":
			switch strings.ToLower(v) {
			case "float":
				o.Precision, o.Exact = mlfeed.Float32, false
			case "double":
				o.Precision, o.Exact = mlfeed.Float64, false
			case "exact":
				o.Precision, o.Exact = mlfeed.Invalid, true
			default:
				err = bad(k, v, "float, double or exact")
			}
		case "skip_sequence_ids":
			o.SkipSequenceIDs, err = parseBool(k, v)
		case "keep_in_memory":
			o.KeepDataInMemory, err = parseBool(k, v)
		case "frame_mode":
			o.FrameMode, err = parseBool(k, v)
		case "cache_index":
			o.CacheIndex, err = parseBool(k, v)
		case "max_errors", "trace_level":
			n, e := strconv.Atoi(v)
			if e != nil || n < 0 {
				return bad(k, v, "a non-negative integer")
			}
			if k == "max_errors" {
				o.MaxErrors = n
			} else {
				o.TraceLevel = n
			}
		case "chunk_size":
			n, e := strconv.ParseUint(v, 10, 64)
			if e != nil {
				if strings.EqualFold(v, "SIZE_MAX") {
					n, e = math.MaxInt64, nil
				} else {
					return bad(k, v, "a byte count")
				}
			}
			if n > math.MaxInt64 {
				n = math.MaxInt64
			}
			o.ChunkSize = int64(n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseBool(k, v string) (bool, error) {
	switch v {
	case "t", "true", "T", "True", "TRUE", "1":
		return true, nil
	case "f", "false", "F", "False", "FALSE", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("%w: ctf option %s=%q: want true or false", format.ErrUsage, k, v)
}

// fromFormat converts the registry's options: Inputs, Params, Log and Context, with CNTK's default
// traceLevel of 1, and Sequential (with SequentialChunkSize).
func fromFormat(fo *format.Options) (*ReaderOptions, error) {
	o := &ReaderOptions{TraceLevel: 1}
	if fo == nil {
		return o, nil
	}
	o.Inputs = fo.Inputs
	o.Log = fo.Log
	o.Context = fo.Context
	if fo.Type == mlfeed.Float64 {
		o.Precision = mlfeed.Float64 // a precision option below overrides it
	}
	if err := ParseParams(o, fo.Params); err != nil {
		return nil, err
	}
	if o.Sequential = fo.Sequential; o.Sequential && o.ChunkSize == 0 {
		o.ChunkSize = SequentialChunkSize
	}
	return o, nil
}

func init() {
	format.Register(format.Format{
		Name:        "ctf",
		Extensions:  []string{".ctf", ".txt"},
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open: func(name string, fo *format.Options) (mlfeed.Source, error) {
			o, err := fromFormat(fo)
			if err != nil {
				return nil, err
			}
			return Open(name, o)
		},
		Streamable: true,
		Create: func(f io.Writer, schema mlfeed.Schema, wo *format.WriteOptions) (mlfeed.Sink, error) {
			var wopts WriterOptions
			if wo != nil {
				if err := parseWriteParams(&wopts, wo.Params); err != nil {
					return nil, err
				}
				if wo.Compress != "" && wo.Compress != "none" || wo.Compat != "" {
					return nil, format.UsageErrorf("ctf: the CTF writer has no compression and no compatibility modes (compress %q, compat %q)", wo.Compress, wo.Compat)
				}
			}
			return NewWriter(f, schema, &wopts)
		},
		Validate: func(name string, fo *format.Options, report func(error) bool) error {
			o, err := fromFormat(fo)
			if err != nil {
				return err
			}
			return Validate(name, o, report)
		},
	})
}
