package hdf5

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/half"
	h5 "github.com/mlfeed/mlfeed/internal/hdf5"
)

// ReaderOptions control reading. The zero value reads every dataset of numbers or strings of
// rank 1 or more (they must share their first dimension) in chunks of about 4 MiB of rows.
type ReaderOptions struct {
	// Datasets are the paths of the datasets to read ("X", "/group/y"), in stream order. Empty
	// means every dataset of numbers or strings and rank >= 1, in path order (datasets of
	// strings of another length than the others' rows left out). A compound dataset
	// (h5py structured array, PyTables Table) is one stream per readable field, "t.field".
	Datasets []string
	// ChunkRows is the number of rows per chunk; 0 picks about 4 MiB worth, rounded to the
	// first chunked dataset's HDF5 chunks.
	ChunkRows int
	// Log, if not nil, receives one line per dataset or link left out when Datasets is empty
	// (a filter or type this package cannot decode, a dangling soft link, an external link),
	// with the reason. Details lists them too, under "skipped".
	Log io.Writer
	// Context, if not nil, carries the scheduler (internal/sched) whose memory budget bounds
	// the rows per chunk when ChunkRows is 0 (whole HDF5 chunks only within the budget);
	// without one, sched.DefaultMemory does. Reads are bounded by the budget of the context
	// ReadChunk is given: an HDF5 chunk that decodes to more is refused (mlfeed.ErrTooLarge).
	Context context.Context
}

// Reader reads an HDF5 file as a data set. It implements mlfeed.Source, ReadChunkReuse and
// SequenceLengths.
type Reader struct {
	f      *h5.File
	close  io.Closer
	schema mlfeed.Schema
	sets   []*h5.Dataset
	srcs   []source // where each stream's values come from
	rows   uint64
	per    uint64 // rows per chunk
	chunks []mlfeed.ChunkInfo
	skip   []string // datasets and links not read, with why
	links  []string // second names of datasets read once
}

// source is where a stream's values come from: a whole dataset, or one member (field) of the
// records of a compound dataset.
type source struct {
	d *h5.Dataset
	m *h5.Member // nil for a whole dataset
}

// typ returns the stream's element type.
func (s source) typ() mlfeed.ElemType {
	if s.m == nil {
		return datasetType(s.d.Type)
	}
	return memberType(s.m.Type)
}

// isString reports whether the source is a whole dataset of strings.
func (s source) isString() bool {
	return s.m == nil && (s.d.Type.Class == h5.String || s.d.Type.Class == h5.VarString)
}

// dims returns the dimensions of one row of the stream: the dataset's after the first, then
// an array member's.
func (s source) dims() []uint64 {
	dims := s.d.Dims[1:]
	if s.m != nil {
		dims = append(dims[:len(dims):len(dims)], s.m.Dims...)
	}
	return dims
}

// Open opens the named HDF5 file.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	r, err := newReader(fh, st.Size(), name, opts)
	if err != nil {
		fh.Close()
		return nil, err
	}
	r.close = fh
	return r, nil
}

// NewReader reads the HDF5 file of size bytes in r.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	return newReader(r, size, "", opts)
}

// targetChunkBytes is the default size of a chunk's rows.
const targetChunkBytes = 4 << 20

func newReader(ra io.ReaderAt, size int64, name string, opts *ReaderOptions) (*Reader, error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	f, err := h5.NewFile(ra, size, name)
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f}
	paths := opts.Datasets
	explicit := len(paths) > 0
	if !explicit {
		if paths, err = r.allDatasets(); err != nil {
			return nil, err
		}
	}
	for _, p := range paths {
		o, err := f.Get(p)
		if err != nil {
			return nil, err
		}
		if !o.IsDataset() {
			return nil, fmt.Errorf("%w: %s: %s is not a dataset", ErrFormat, name, p)
		}
		d, err := o.Dataset()
		var srcs []source
		var notes []string // members left out
		if err == nil && d.Type.Class == h5.Compound {
			for i := range d.Type.Members {
				m := &d.Type.Members[i]
				if m.Err == nil && memberType(m.Type) == mlfeed.Invalid {
					m.Err = fmt.Errorf("%w: %s values", ErrUnsupported, m.Type)
				}
				if m.Err != nil {
					notes = append(notes, fmt.Sprintf("field %q: %s", m.Name, reason(m.Err)))
					continue
				}
				srcs = append(srcs, source{d, m})
			}
			if len(srcs) == 0 {
				err = fmt.Errorf("%w: compound datatype of no member this reader reads (%s)", ErrUnsupported, strings.Join(notes, "; "))
			}
		} else if err == nil {
			srcs = []source{{d, nil}}
			if datasetType(d.Type) == mlfeed.Invalid {
				err = fmt.Errorf("%w: dataset %s holds %s values", ErrUnsupported, p, d.Type)
			}
		}
		if err == nil && len(d.Dims) == 0 {
			err = fmt.Errorf("%w: dataset %s is a scalar, not rows", ErrUnsupported, p)
		}
		if err != nil {
			// only what this package cannot decode is left out; a corrupt dataset is an error
			if explicit || !errors.Is(err, mlfeed.ErrUnsupported) {
				return nil, err
			}
			r.skip = append(r.skip, fmt.Sprintf("%s: %s", p, reason(err)))
			continue
		}
		r.sets = append(r.sets, d)
		r.srcs = append(r.srcs, srcs...)
		for _, n := range notes {
			r.skip = append(r.skip, fmt.Sprintf("%s %s", d.Path(), n))
		}
	}
	if !explicit {
		r.dropOtherStrings()
	}
	if opts.Log != nil {
		for _, s := range r.skip {
			fmt.Fprintf(opts.Log, "hdf5: %s: skipped %s\n", name, s)
		}
	}
	if len(r.sets) == 0 {
		if len(r.skip) > 0 {
			return nil, fmt.Errorf("%w: %s holds no dataset this reader can decode: %s", ErrUnsupported, name, strings.Join(r.skip, "; "))
		}
		return nil, fmt.Errorf("%w: %s holds no dataset of numbers or strings to read as rows", ErrFormat, name)
	}
	r.rows = r.sets[0].Dims[0]
	for _, d := range r.sets[1:] {
		if d.Dims[0] != r.rows {
			var shapes []string
			for _, d := range r.sets {
				shapes = append(shapes, fmt.Sprintf("%s %v", d.Path(), d.Dims))
			}
			return nil, fmt.Errorf("%w: %s: the datasets do not share a first dimension (%s); pick some with the datasets option", ErrFormat, name, strings.Join(shapes, ", "))
		}
	}
	rowBytes := uint64(0)
	for _, d := range r.sets {
		// the chunk index is metadata: read it now, so that reads share it
		if _, err := d.ChunkCount(); err != nil {
			return nil, err
		}
		if d.RowLen() > 1<<31 {
			return nil, fmt.Errorf("%w: dataset %s has rows of %d elements", ErrUnsupported, d.Path(), d.RowLen())
		}
		if d.Type.Class == h5.Compound {
			rowBytes += d.RowLen() * uint64(d.Type.Size) // the records, read before their fields
		}
	}
	names := map[string]bool{}
	for _, s := range r.srcs {
		sn := strings.TrimPrefix(s.d.Path(), "/")
		n := s.d.RowLen()
		if s.m != nil {
			sn += "." + s.m.Name
			if n *= s.m.Elems(); n > 1<<31 {
				return nil, fmt.Errorf("%w: dataset %s has rows of %d elements in field %q", ErrUnsupported, s.d.Path(), n, s.m.Name)
			}
		}
		if names[sn] {
			return nil, fmt.Errorf("%w: %s: two streams would be named %q; pick datasets with the datasets option", ErrUnsupported, name, sn)
		}
		names[sn] = true
		st := mlfeed.Stream{Name: sn, Storage: mlfeed.Dense, Type: s.typ(), Dim: int(n)}
		// a row of one column keeps its shape [1], so that it is written back as such
		if dims := s.dims(); len(dims) > 1 || len(dims) == 1 && dims[0] == 1 {
			for _, x := range dims {
				st.Shape = append(st.Shape, int(x))
			}
		}
		r.schema.Streams = append(r.schema.Streams, st)
		if st.Type.IsVarLen() {
			es := s.d.Type.Size // a fixed-length string's bytes, or a heap reference's
			if s.m != nil {
				es = s.m.Type.Size
			}
			rowBytes += n * uint64(es+16) // the bytes and a string header per value
		} else {
			rowBytes += n * uint64(st.Type.Size())
		}
	}
	if rowBytes == 0 && r.rows > uint64(size) {
		// rows of no data: the file's size bounds how many a real file holds
		return nil, fmt.Errorf("%w: %s: %d rows of no data in a %d-byte file", ErrFormat, name, r.rows, size)
	}
	r.per = uint64(opts.ChunkRows)
	if r.per == 0 {
		r.per = max(1, targetChunkBytes/max(rowBytes, 1))
		// whole HDF5 chunks, unless their rows alone would pass the memory budget: then
		// reading refuses a chunk that decodes to more than the budget, and reads parts of
		// smaller ones
		ctx := opts.Context
		if ctx == nil {
			ctx = context.Background()
		}
		limit := uint64(h5.MemoryLimit(ctx))
		for _, d := range r.sets {
			if c := d.Chunk(); len(c) > 0 {
				if aligned := max(c[0], r.per/c[0]*c[0]); aligned <= limit/max(rowBytes, 1) {
					r.per = aligned
				}
				break
			}
		}
	}
	for at := uint64(0); at < r.rows; at += r.per {
		n := min(r.per, r.rows-at)
		r.chunks = append(r.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: int64(n)})
	}
	return r, nil
}

// allDatasets lists every dataset's path in path order, each dataset once (under the first path
// met, depth first in name order, as h5py's visititems); groups whose name starts with "#"
// (MATLAB's #refs#) are not entered. Links that lead nowhere (dangling soft links, external
// links) are listed in r.skip, second links to a dataset in r.links.
func (r *Reader) allDatasets() ([]string, error) {
	var out []string
	err := r.f.Walk(func(e h5.WalkEntry) error {
		switch {
		case e.Err != nil && e.Kind == h5.ExternalLink:
			r.skip = append(r.skip, fmt.Sprintf("%s: external link to %s (not followed)", e.Path(), e.Target))
		case e.Err != nil && e.Kind == h5.UserDefinedLink:
			r.skip = append(r.skip, fmt.Sprintf("%s: user-defined link of %s (not followed)", e.Path(), e.Target))
		case e.Err != nil:
			r.skip = append(r.skip, fmt.Sprintf("%s: soft link to %s, which leads nowhere (%s)", e.Path(), e.Target, reason(e.Err)))
		case e.Seen:
			if e.Object.IsDataset() {
				r.links = append(r.links, fmt.Sprintf("%s: hard link to %s (read once, as %s)", e.Path(), e.Object.Path(), e.Object.Path()))
			}
		case e.Kind == h5.SoftLink:
			if e.Object.IsDataset() {
				r.links = append(r.links, fmt.Sprintf("%s: soft link to %s (read as the dataset it names)", e.Path(), e.Target))
			}
		case e.Object.IsDataset():
			out = append(out, e.Path())
		case e.Object.IsGroup() && strings.HasPrefix(e.Name(), "#"):
			return h5.SkipGroup
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// Schema describes the streams: one dense stream per dataset, or per field of a compound one.
func (r *Reader) Schema() mlfeed.Schema { return r.schema }

// Chunks returns the chunk table.
func (r *Reader) Chunks() []mlfeed.ChunkInfo { return r.chunks }

// ReadChunk reads chunk i.
func (r *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return r.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse reads chunk i into prev's memory where it fits.
func (r *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("hdf5: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	row := uint64(i) * r.per
	n := uint64(r.chunks[i].Sequences)
	c := prev
	if c == nil || len(c.Streams) != len(r.srcs) {
		c = &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(r.srcs))}
	}
	c.Sequences, c.IDs = int(n), nil
	var recs []byte // the records of the compound dataset of the streams at hand, in recBuf
	var recBuf *[]byte
	defer func() {
		if recBuf != nil {
			recordPool.Put(recBuf)
		}
	}()
	var recsOf *h5.Dataset
	for k, s := range r.srcs {
		d := s.d
		sd := &c.Streams[k]
		if uint64(cap(sd.SeqStart)) >= n+1 {
			sd.SeqStart = sd.SeqStart[:n+1]
		} else {
			sd.SeqStart = make([]int64, n+1)
		}
		for q := range sd.SeqStart {
			sd.SeqStart[q] = int64(q)
		}
		sd.SampleStart, sd.Indices = nil, nil
		t := r.schema.Streams[k].Type // s.typ(), decided at open
		vals := n * uint64(r.schema.Streams[k].Dim)
		nb := int(vals * uint64(t.Size()))
		switch {
		case t.IsVarLen() && sd.Values.Type == t && uint64(cap(sd.Values.Strings)) >= vals:
			sd.Values.Strings = sd.Values.Strings[:vals]
		case !t.IsVarLen() && sd.Values.Type == t && cap(sd.Values.Bytes) >= nb:
			sd.Values.Bytes = sd.Values.Bytes[:nb]
		default:
			sd.Values = mlfeed.NewBuffer(t, int(vals))
		}
		if s.isString() {
			if err := r.readStrings(ctx, &sd.Values, d, row, n); err != nil {
				return nil, err
			}
			continue
		}
		if s.m != nil {
			if recsOf != d {
				need := n * d.RowLen() * uint64(d.Type.Size)
				if recBuf == nil {
					recBuf, _ = recordPool.Get().(*[]byte)
				}
				if recBuf == nil || uint64(cap(*recBuf)) < need {
					b := make([]byte, need)
					recBuf = &b
				}
				recs, recsOf = (*recBuf)[:need], d
				if err := d.ReadRowsContext(ctx, recs, row, n); err != nil {
					return nil, err
				}
			}
			readMember(&sd.Values, s.m, recs, d.Type.Size)
			continue
		}
		if d.Type.Half {
			// float16: read as stored (2 bytes a value) into the second half of the chunk's
			// values, then widened in place
			stored := sd.Values.Bytes[nb/2:]
			if err := d.ReadRowsContext(ctx, stored, row, n); err != nil {
				return nil, err
			}
			half.Widen(sd.Values.Bytes, stored, false)
			continue
		}
		if err := d.ReadRowsContext(ctx, sd.Values.Bytes, row, n); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// recordPool holds buffers of compound records between chunk reads (*[]byte): a chunk's
// records are read whole, then split into its fields' streams, which copy them out.
var recordPool sync.Pool

// readStrings sets vals to the strings of rows [row, row+n) of string dataset d: a
// fixed-length string less its padding (as numpy's bytes: Datatype.FixedString), a
// variable-length one from the global heap, which must be UTF-8 when d says it is.
func (r *Reader) readStrings(ctx context.Context, vals *mlfeed.Buffer, d *h5.Dataset, row, n uint64) error {
	need := n * d.RowLen() * uint64(d.Type.Size)
	buf, _ := recordPool.Get().(*[]byte)
	if buf == nil || uint64(cap(*buf)) < need {
		b := make([]byte, need)
		buf = &b
	}
	defer recordPool.Put(buf)
	raw := (*buf)[:need]
	if err := d.ReadRowsContext(ctx, raw, row, n); err != nil {
		return err
	}
	if d.Type.Class == h5.String {
		es := d.Type.Size
		for i := range vals.Strings {
			vals.Strings[i] = d.Type.FixedString(raw[i*es : (i+1)*es])
		}
		return nil
	}
	if err := d.VarStrings(ctx, raw, vals.Strings); err != nil {
		return err
	}
	if vals.Type == mlfeed.String {
		for i, v := range vals.Strings {
			if !utf8.ValidString(v) {
				return fmt.Errorf("%w: dataset %s, row %d: a string declared UTF-8 that is not", ErrFormat, d.Path(), row+uint64(i)/max(d.RowLen(), 1))
			}
		}
	}
	return nil
}

// dropOtherStrings leaves out, with a note, the datasets of strings whose first dimension is
// not that of the datasets of numbers (class names beside X and y): their rows are not the
// data set's. Datasets of strings alone keep the first one's.
func (r *Reader) dropOtherStrings() {
	rows, found := uint64(0), false
	for _, d := range r.sets {
		if !isStringType(d.Type) {
			rows, found = d.Dims[0], true
			break
		}
	}
	if !found {
		return // strings alone: they must share their first dimension, as any datasets
	}
	keep := r.sets[:0]
	for _, d := range r.sets {
		if isStringType(d.Type) && d.Dims[0] != rows {
			r.skip = append(r.skip, fmt.Sprintf("%s: %d strings, where the data set has %d rows (read it with the datasets option)", d.Path(), d.Dims[0], rows))
			continue
		}
		keep = append(keep, d)
	}
	var srcs []source
	for _, s := range r.srcs {
		if !s.isString() || s.d.Dims[0] == rows {
			srcs = append(srcs, s)
		}
	}
	r.sets, r.srcs = keep, srcs
}

// isStringType reports whether t is a string type, of fixed or variable length.
func isStringType(t h5.Datatype) bool { return t.Class == h5.String || t.Class == h5.VarString }

// readMember sets vals to the values of member m of the records recs of size bytes: bytes
// for a fixed-length string (less its trailing NULs, as numpy gives them), float32 for float16,
// the number itself (little-endian) otherwise.
func readMember(vals *mlfeed.Buffer, m *h5.Member, recs []byte, size int) {
	switch {
	case vals.Type.IsVarLen():
		es, elems := m.Type.Size, int(m.Elems())
		for i := range vals.Strings {
			at := i/elems*size + m.Offset + i%elems*es
			vals.Strings[i] = m.Type.FixedString(recs[at : at+es])
		}
	case m.Type.Half:
		// read as stored (2 bytes a value) into the second half, then widened in place
		stored := vals.Bytes[len(vals.Bytes)/2:]
		m.Gather(stored, recs, size)
		half.Widen(vals.Bytes, stored, false)
	default:
		m.Gather(vals.Bytes, recs, size)
	}
}

// SequenceLengths returns the length of each sequence of chunk i: every row is one sample.
func (r *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("hdf5: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	out := make([]int64, r.chunks[i].Sequences)
	for k := range out {
		out[k] = 1
	}
	return out, nil
}

// Details describes the datasets' storage for `mlfeed info`.
func (r *Reader) Details() map[string]any {
	sets := map[string]string{}
	for _, d := range r.sets {
		s := fmt.Sprintf("%s%v %s", d.Type, d.Dims, d.Layout())
		if c := d.Chunk(); c != nil {
			s += fmt.Sprintf("%v %s", c, d.Index())
		}
		if fl := d.Filters(); len(fl) > 0 {
			s += "+" + strings.Join(fl, "+")
		}
		sets[d.Path()] = s
	}
	m := map[string]any{"datasets": sets, "rows_per_chunk": r.per}
	var halves []string
	for k, s := range r.srcs {
		if s.d.Type.Half || s.m != nil && s.m.Type.Half {
			halves = append(halves, r.schema.Streams[k].Name)
		}
	}
	if len(halves) > 0 {
		m["float16_read_as_float32"] = halves
	}
	if len(r.skip) > 0 {
		m["skipped"] = r.skip
	}
	if len(r.links) > 0 {
		m["links"] = r.links
	}
	return m
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.close != nil {
		return r.close.Close()
	}
	return nil
}

// reason is err's message without the file's name and the package's prefixes, for the list of
// datasets left out: "filter 32000 (lzf) at byte 1234".
func reason(err error) string {
	var pe *mlfeed.PosError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (%s at byte offset %d)", trimSentinels(pe.Err.Error()), pe.Field, pe.Offset)
	}
	return trimSentinels(err.Error())
}

// trimSentinels drops the sentinels' text from the front of an error message.
func trimSentinels(s string) string {
	for _, e := range []error{ErrUnsupported, ErrFormat, h5.ErrNotFound, mlfeed.ErrUnsupported, mlfeed.ErrFormat} {
		s = strings.TrimPrefix(s, e.Error()+": ")
	}
	return s
}

// elemType is the type a dataset's values are read as: its own, or float32 for float16 (which
// holds every float16 exactly).
func elemType(t h5.Datatype) mlfeed.ElemType {
	if t.Half {
		return mlfeed.Float32
	}
	return t.ElemType()
}

// datasetType is the type a whole dataset's values are read as: elemType's, or for strings
// as h5py reads them: bytes for fixed-length ones and variable-length ASCII, text for
// variable-length UTF-8.
func datasetType(t h5.Datatype) mlfeed.ElemType {
	switch {
	case t.Class == h5.String, t.Class == h5.VarString && !t.UTF8:
		return mlfeed.Bytes
	case t.Class == h5.VarString:
		return mlfeed.String
	}
	return elemType(t)
}

// memberType is the type a compound member's values are read as: elemType's, or Bytes for a
// fixed-length string (h5py reads them as bytes).
func memberType(t h5.Datatype) mlfeed.ElemType {
	if t.Class == h5.String {
		return mlfeed.Bytes
	}
	return elemType(t)
}
