// Package convert moves a data set from a mlfeed.Source into a format's writer: streaming
// chunk by chunk (decoding the next chunks on the scheduler while the current one is written), converting element
// types and densifying sparse streams on request, and committing the output file atomically.
package convert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/atomicfile"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/storage"
)

// Options control a conversion. The zero value converts losslessly to the format named by the
// output file's extension with the format's default write options.
type Options struct {
	// Format is the output format. Nil selects it from the output name's extension.
	Format *format.Format
	// Write holds the writer's options. Sequences is filled in from the source.
	Write format.WriteOptions
	// Type, when not Invalid, converts every numeric stream to this element type. Values that
	// the type cannot hold exactly are an error (mlfeed.ErrRange), never rounded.
	Type mlfeed.ElemType
	// Densify stores sparse streams densely (needed for formats without sparse storage).
	Densify bool
	// Streams, when not empty, selects these streams (by name or alias), in this order, and
	// drops the others.
	Streams []string
	// Progress, if set, is called after each chunk with the samples written so far and the
	// total.
	Progress func(done, total int64)
	// Threads and Memory bound the reading ahead (the threads that decode chunks, the
	// caller's included, and the bytes of decoded chunks waiting to be written) when ctx
	// carries no scheduler, as the CLI's does: zero means all cores and sched.DefaultMemory.
	Threads int
	Memory  int64
	// Log receives notices about the conversion, a line each: a stream whose multi-axis
	// Shape the output format cannot hold and stores flat (format.Format.KeepsShape), as
	// MNIST's 28x28 images become vectors of 784 values in CBF. Nil discards them.
	Log io.Writer
}

// noteFlattened writes to opts.Log a line for each stream of schema whose shape ft stores as
// a flat vector.
func noteFlattened(out string, ft *format.Format, schema mlfeed.Schema, opts *Options) {
	if opts.Log == nil || ft.KeepsShape {
		return
	}
	for _, st := range schema.Streams {
		if len(st.Shape) > 1 {
			fmt.Fprintf(opts.Log, "notice: %s: %s stores no sample shapes: stream %q of shape %s is stored flat, as dim %d\n",
				out, ft.Name, st.Name, shapeString(st.Shape), st.Dim)
		}
	}
}

func shapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

// File converts src into the file out. The file appears only when the conversion succeeds:
// it is written to a temporary file beside it (see package atomicfile), which an error or a
// signal removes. out "-" is standard output, and a FIFO or a character device (/dev/null)
// is written into directly; both need a format that streams (format.Format.Streamable), else
// the error wraps format.ErrUsage, as for a directory, a socket or a block device. Errors name
// out, never the temporary file.
func File(ctx context.Context, src mlfeed.Source, out string, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	if len(opts.Streams) > 0 {
		sel, err := mlfeed.Select(src, opts.Streams...)
		if err != nil {
			return err
		}
		src = sel
	}
	ft := opts.Format
	if ft == nil {
		var ok bool
		if ft, ok = format.ByExtension(out); !ok {
			return fmt.Errorf("%w: cannot tell the output format from %q; name it in Options.Format", mlfeed.ErrUnknownFormat, out)
		}
	}
	schema, err := TargetSchema(src.Schema(), opts)
	if err != nil {
		return err
	}
	noteFlattened(out, ft, schema, opts)
	if !ft.Writable() {
		return fmt.Errorf("%w: %s: mlfeed reads %s but does not write it", format.ErrUsage, out, ft.Name)
	}
	if ft.IsDir() {
		return toDir(ctx, src, out, ft, schema, opts)
	}
	if out == "-" {
		if !ft.Streamable {
			return fmt.Errorf("%w: %s cannot be written to standard output: it %w", format.ErrUsage, ft.Name, format.ErrNeedsSeek)
		}
		if err := write(ctx, os.Stdout, ft, schema, src, out, opts); err != nil {
			return fmt.Errorf("standard output: %w", err)
		}
		return nil
	}
	if storage.IsURL(out) {
		return toObject(ctx, src, out, ft, schema, opts)
	}
	f, err := atomicfile.Create(out)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	if err != nil {
		return err
	}
	defer f.Abort()
	if f.Direct() && !ft.Streamable {
		return fmt.Errorf("%w: %s: %s output %w, not a pipe or a device", format.ErrUsage, out, ft.Name, format.ErrNeedsSeek)
	}
	var w io.Writer = f.File
	var pieces *output
	if ft.Streamable && !f.Direct() {
		w, pieces = streamed(f.File, ft, schema)
	}
	err = write(ctx, w, ft, schema, src, out, opts)
	if err == nil {
		err = pieces.Flush()
	}
	if err != nil {
		return f.Err(fmt.Errorf("%s: %w", out, err))
	}
	return f.Commit()
}

// toDir writes src with a format whose output is a directory (format.Format.IsDir) as the
// directory out, which must not exist or be empty. It is written as a temporary directory
// beside out, renamed into place when complete and removed on an error.
func toDir(ctx context.Context, src mlfeed.Source, out string, ft *format.Format, schema mlfeed.Schema, opts *Options) error {
	if out == "-" || storage.IsURL(out) {
		return fmt.Errorf("%w: %s output is a directory: give a local directory name, not %q", format.ErrUsage, ft.Name, out)
	}
	if fi, err := os.Stat(out); err == nil {
		ents, rerr := os.ReadDir(out)
		if !fi.IsDir() || rerr != nil || len(ents) > 0 {
			return fmt.Errorf("%w: %s: %s output is a directory, and this is a file or a directory that holds files", format.ErrUsage, out, ft.Name)
		}
	}
	clean := filepath.Clean(out)
	tmp, err := os.MkdirTemp(filepath.Dir(clean), "."+filepath.Base(clean)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	wo := opts.Write
	wo.Name = out
	if sched.FromContext(ctx) == nil {
		ctx = sched.WithContext(ctx, sched.New(opts.Threads, opts.Memory))
	}
	wo.Context = ctx
	sink, err := ft.CreateDir(tmp, schema, &wo)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := Copy(ctx, sink, src, opts); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if _, err := os.Stat(out); err == nil {
		if err := os.Remove(out); err != nil { // empty, checked above
			return err
		}
	}
	return os.Rename(tmp, out)
}

// toObject writes src as the object out in object storage, which appears only once complete:
// a streamable format is uploaded as it is written, another is written to a temporary file
// first (removed afterwards, and on a signal).
func toObject(ctx context.Context, src mlfeed.Source, out string, ft *format.Format, schema mlfeed.Schema, opts *Options) error {
	w, err := storage.Create(ctx, out)
	if err != nil {
		return err
	}
	defer w.Abort()
	if ft.Streamable {
		bw := bufio.NewWriterSize(w, 4<<20)
		if err := write(ctx, bw, ft, schema, src, out, opts); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return w.Commit()
	}
	b, _, _ := strings.Cut(out, "?")
	f, err := atomicfile.Create(filepath.Join(os.TempDir(), "mlfeed-upload-"+path.Base(b)))
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(ctx, f.File, ft, schema, src, out, opts); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if _, err := f.File.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyBuffer(w, f.File, make([]byte, 4<<20)); err != nil {
		return err
	}
	return w.Commit()
}

// write creates ft's sink on w and copies src into it.
func write(ctx context.Context, w io.Writer, ft *format.Format, schema mlfeed.Schema, src mlfeed.Source, out string, opts *Options) error {
	wo := opts.Write
	if ft.NeedsCount {
		wo.Sequences, _ = mlfeed.Totals(src.Chunks())
	}
	wo.Name = out
	if sched.FromContext(ctx) == nil {
		// One scheduler for reading (Copy) and for the writer's own work.
		ctx = sched.WithContext(ctx, sched.New(opts.Threads, opts.Memory))
	}
	wo.Context = ctx
	sink, err := ft.Create(w, schema, &wo)
	if err != nil {
		if errors.Is(err, mlfeed.ErrUnsupported) && len(schema.Streams) > 1 && strings.Contains(err.Error(), `stream "`) {
			// one stream the output cannot hold: the others can be converted without it
			return format.Needs(err, format.ErrNeedsStreams)
		}
		return err
	}
	if err := Copy(ctx, sink, src, opts); err != nil {
		return err
	}
	return sink.Close()
}

// TargetSchema returns the schema a conversion with opts produces from s.
func TargetSchema(s mlfeed.Schema, opts *Options) (mlfeed.Schema, error) {
	out := s
	out.Streams = append([]mlfeed.Stream(nil), s.Streams...)
	for i := range out.Streams {
		st := &out.Streams[i]
		if opts.Densify && st.Storage == mlfeed.Sparse {
			if st.Type.IsVarLen() {
				return out, fmt.Errorf("%w: sparse %s stream %q cannot be densified", mlfeed.ErrUnsupported, st.Type, st.Name)
			}
			if st.Dim == 0 {
				return out, fmt.Errorf("%w: sparse stream %q has no dimension and cannot be densified", mlfeed.ErrUnsupported, st.Name)
			}
			st.Storage = mlfeed.Dense
		}
		if opts.Type != mlfeed.Invalid && st.Type != opts.Type {
			if !st.Type.IsNumeric() || !opts.Type.IsNumeric() {
				return out, fmt.Errorf("%w: stream %q holds %s, which cannot become %s", mlfeed.ErrUnsupported, st.Name, st.Type, opts.Type)
			}
			st.Type = opts.Type
		}
	}
	return out, nil
}

// Copy streams every chunk of src into sink, applying opts.Type and opts.Densify (the sink
// must have been created with TargetSchema). The next chunks are decoded on the scheduler's
// other threads while the current one is written (on the caller's goroutine alone with one
// thread), into the memory of chunks already written where the source can. It does not close
// the sink. An input file that shrinks while it is mapped is an error naming it (see
// internal/mmap), not a crash.
func Copy(ctx context.Context, sink mlfeed.Sink, src mlfeed.Source, opts *Options) (err error) {
	defer mmap.Recover(mmap.Catch(), &err)
	if opts == nil {
		opts = &Options{}
	}
	in := src.Schema()
	outSchema, err := TargetSchema(in, opts)
	if err != nil {
		return err
	}
	// The chunk table's counts only serve the progress report: a source that makes its table on
	// first use (mlfeed.NumChunks) is read without one otherwise.
	var chunks []mlfeed.ChunkInfo
	var total int64
	if opts.Progress != nil {
		chunks = src.Chunks()
		_, total = mlfeed.Totals(chunks)
	}
	s := sched.FromContext(ctx)
	if s == nil {
		s = sched.New(opts.Threads, opts.Memory)
	}
	order := make([]int, mlfeed.NumChunks(src))
	for i := range order {
		order[i] = i
	}
	// A sink keeps nothing of a chunk after WriteChunk: the next ones may decode into it.
	ra := s.ReadAhead(ctx, src, order, &sched.ReadAheadOptions{Recycle: true, Ahead: readAheadPerThread * s.Threads()})
	defer ra.Close()
	var done, base int64 // base: the sequences of the chunks before
	for ra.Next() {
		i := ra.Index()
		c, err := Transform(&in, &outSchema, ra.Chunk())
		if err != nil {
			return fmt.Errorf("chunk %d: %w", i, inDataSet(err, base))
		}
		base += int64(c.Sequences)
		if err := sink.WriteChunk(c); err != nil {
			return err
		}
		if opts.Progress != nil {
			done += chunks[i].Samples
			opts.Progress(done, total)
		}
	}
	if err := ra.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

// readAheadPerThread is how many chunks per thread Copy lets the scheduler decode ahead of
// the one being written, within the memory budget: now and then a sink stops to write what it
// gathered (CBF: a whole chunk of tens of MB, 10-20 ms), and the decoders keep on meanwhile
// rather than wait once they are a chunk ahead. `convert --compat ctf2bin` of a 200 MB CTF
// file (read in 4 MiB chunks) on 2 cores, median of 10: 0.2377 s with 1 (the scheduler's
// default), 0.2323 s with 4, 0.2336 s with 8.
const readAheadPerThread = 4

// Transform converts a chunk of schema in into schema out, which differs from in only by
// element types and by sparse streams made dense (see TargetSchema). Streams that do not change
// are shared, not copied.
func Transform(in, out *mlfeed.Schema, c *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	res := *c
	res.Streams = append([]mlfeed.StreamData(nil), c.Streams...)
	for i := range res.Streams {
		a, b := &in.Streams[i], &out.Streams[i]
		d := &res.Streams[i]
		if a.Storage == mlfeed.Sparse && b.Storage == mlfeed.Dense {
			dense, err := densify(a, d)
			if err != nil {
				return nil, err
			}
			*d = dense
		}
		if d.Values.Type != b.Type {
			v, err := mlfeed.ConvertBuffer(d.Values, b.Type)
			if err != nil {
				return nil, fmt.Errorf("stream %q: %w", a.Name, err)
			}
			d.Values = v
		}
	}
	return &res, nil
}

// inDataSet turns the chunk's sequence number of a RepeatedIndexError into the data set's,
// for a chunk that starts at sequence base.
func inDataSet(err error, base int64) error {
	var re *RepeatedIndexError
	if errors.As(err, &re) {
		re.Sequence += base
	}
	return err
}

// RepeatedIndexError is Transform's error for a sparse sample that holds an index more than
// once, which a dense sample cannot store (it has one value per index): densifying would keep
// one value and drop the others. It wraps mlfeed.ErrFormat. Sequence counts from 0 within the
// chunk Transform was given; Copy and Shards make it the data set's.
type RepeatedIndexError struct {
	Stream   string
	Sequence int64
	Sample   int64 // within the sequence, from 0
	Index    int32
}

func (e *RepeatedIndexError) Error() string {
	return fmt.Sprintf("%v: stream %q: sequence %d (from 0), sample %d, holds index %d more than once: --densify cannot keep every value (a dense sample has one per index)",
		mlfeed.ErrFormat, e.Stream, e.Sequence, e.Sample, e.Index)
}

func (e *RepeatedIndexError) Unwrap() error { return mlfeed.ErrFormat }

// densify stores d, sparse samples of stream st, densely; a sample that repeats an index is a
// RepeatedIndexError.
func densify(st *mlfeed.Stream, d *mlfeed.StreamData) (mlfeed.StreamData, error) {
	n := d.Samples()
	out := mlfeed.StreamData{SeqStart: d.SeqStart, Values: mlfeed.NewBuffer(st.Type, int(n)*st.Dim)}
	sz := st.Type.Size()
	// seen[i] == s+1 when sample s has set index i: one pass, no clearing between samples.
	seen := make([]int64, st.Dim)
	q := 0
	for s := int64(0); s < n; s++ {
		for d.SeqStart[q+1] <= s {
			q++
		}
		for k := d.SampleStart[s]; k < d.SampleStart[s+1]; k++ {
			i := d.Indices[k]
			if seen[i] == s+1 {
				return mlfeed.StreamData{}, &RepeatedIndexError{Stream: st.Name, Sequence: int64(q), Sample: s - d.SeqStart[q], Index: i}
			}
			seen[i] = s + 1
			dst := (int(s)*st.Dim + int(i)) * sz
			copy(out.Values.Bytes[dst:dst+sz], d.Values.Bytes[int(k)*sz:int(k+1)*sz])
		}
	}
	return out, nil
}
