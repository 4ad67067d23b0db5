package hdf5

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mlfeed/mlfeed"
	h5 "github.com/mlfeed/mlfeed/internal/hdf5"
)

// WriterOptions control writing. The zero value writes uncompressed chunks of about 1 MiB.
type WriterOptions struct {
	// Level is the deflate level 1-9; 0 stores chunks uncompressed.
	Level int
	// Shuffle adds the shuffle filter before deflate (with Level > 0).
	Shuffle bool
	// ChunkRows is the number of rows per HDF5 chunk; 0 picks about 1 MiB worth per dataset
	// (but no more than Rows).
	ChunkRows int
	// Rows is the number of rows that will be written, when known (0: unknown); it keeps
	// default chunks no larger than the data.
	Rows int64
	// Context, if not nil, carries cancellation and the scheduler (internal/sched) whose
	// threads compress a chunk's rows in parallel in WriteChunk. Nil means
	// context.Background(): on the caller alone.
	Context context.Context
}

// Writer writes a data set as an HDF5 file: each stream becomes a dataset named after it
// (a name with "/" makes groups), of shape [rows] for one value per sample, [rows, Dim], or
// [rows, Shape...]. Streams must be dense with a fixed sample size, one sample per sequence, of
// a numeric type. It implements mlfeed.Sink.
type Writer struct {
	ctx    context.Context
	w      *h5.Writer
	schema mlfeed.Schema
	sets   []*h5.DatasetWriter
	file   *os.File // closed by Close, when made by Create
}

// NewWriter returns a Writer that writes an HDF5 file into w from offset 0 (HDF5 puts its
// root at the end, so w must allow writing at any offset).
func NewWriter(w io.WriterAt, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	if opts.Level < 0 || opts.Level > 9 {
		return nil, fmt.Errorf("%w: deflate level %d is not 0-9", ErrUnsupported, opts.Level)
	}
	hw := h5.NewWriter(w)
	out := &Writer{ctx: opts.Context, w: hw, schema: schema}
	if out.ctx == nil {
		out.ctx = context.Background()
	}
	for _, st := range schema.Streams {
		if st.Storage != mlfeed.Dense {
			return nil, fmt.Errorf("%w: stream %q is sparse; HDF5 datasets hold dense rows (write Binsparse, .bsp.h5, for sparse data)", ErrUnsupported, st.Name)
		}
		if st.Dim == 0 && st.Shape == nil {
			return nil, fmt.Errorf("%w: stream %q has samples of varying size; a dataset's rows have one shape", ErrUnsupported, st.Name)
		}
		t := st.Type
		if !t.IsInteger() && t != mlfeed.Float32 && t != mlfeed.Float64 {
			return nil, fmt.Errorf("%w: stream %q holds %s values; HDF5 datasets here hold integers and floats", ErrUnsupported, st.Name, t)
		}
		var shape []uint64
		switch {
		case st.Shape != nil:
			for _, x := range st.Shape {
				shape = append(shape, uint64(x))
			}
		case st.Dim > 1:
			shape = []uint64{uint64(st.Dim)}
		}
		rowBytes := max(1, st.Dim*t.Size())
		rows := opts.ChunkRows
		if rows <= 0 {
			rows = max(1, (1<<20)/rowBytes)
			if opts.Rows > 0 {
				rows = int(min(int64(rows), opts.Rows))
			}
		}
		path, name := "/", st.Name
		if k := strings.LastIndexByte(name, '/'); k >= 0 {
			path, name = name[:k], name[k+1:]
		}
		d, err := hw.CreateDataset(path, name, t, shape, h5.DatasetOptions{ChunkRows: uint64(rows), Level: opts.Level, Shuffle: opts.Shuffle && opts.Level > 0})
		if err != nil {
			return nil, fmt.Errorf("stream %q: %w", st.Name, err)
		}
		out.sets = append(out.sets, d)
	}
	return out, nil
}

// WriteChunk appends the chunk's sequences as rows.
func (w *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if err := c.Validate(&w.schema); err != nil {
		return err
	}
	for i := range c.Streams {
		sd := &c.Streams[i]
		for q, s := range sd.SeqStart {
			if q > 0 && s != int64(q) {
				return fmt.Errorf("%w: stream %q: sequence %d has %d samples; an HDF5 row holds one", ErrUnsupported, w.schema.Streams[i].Name, q-1, s-sd.SeqStart[q-1])
			}
		}
		if err := w.sets[i].WriteContext(w.ctx, sd.Values.Bytes); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the file's metadata. It does not close the writer given to NewWriter; it closes
// the file Create made.
func (w *Writer) Close() error {
	err := w.w.Close()
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Create creates the named file and returns a Writer whose Close also closes the file.
func Create(name string, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, schema, opts)
	if err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	w.file = f
	return w, nil
}
