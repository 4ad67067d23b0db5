package webdataset

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/npy"
)

// WriterOptions configures a Writer. The zero value writes a plain tar file.
type WriterOptions struct {
	// Compression is CompressionNone (the default, also for "") or CompressionGzip.
	Compression string
	// Level is the gzip level, 1 to 9; zero means 6.
	Level int
}

// Writer writes sequences as the samples of one shard.
type Writer struct {
	schema mlfeed.Schema
	exts   []string // per stream, the member extension
	enc    []kind   // per stream, how values are encoded
	descr  []string // per stream, the .npy dtype
	tw     *tar.Writer
	bw     *bufio.Writer
	z      io.WriteCloser
	buf    []byte
	n      int64 // sequences written
	prev   string
	err    error
}

// mtime is the modification time of every member: fixed, so that a conversion is
// reproducible.
var mtime = time.Unix(0, 0)

// NewWriter returns a writer of schema's streams to w. A stream a shard cannot hold is
// refused here (ErrUnsupported): sparse storage, types .npy has no dtype for (time types),
// names that are not lowercase extensions, two streams that would share an extension.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	o := WriterOptions{}
	if opts != nil {
		o = *opts
	}
	wr := &Writer{schema: schema}
	seen := map[string]string{}
	for _, st := range schema.Streams {
		ext, enc, descr, err := memberExt(&st)
		if err != nil {
			return nil, err
		}
		if other, ok := seen[ext]; ok {
			return nil, fmt.Errorf("%w: streams %q and %q would both be members KEY.%s", ErrUnsupported, other, st.Name, ext)
		}
		seen[ext] = st.Name
		wr.exts, wr.enc, wr.descr = append(wr.exts, ext), append(wr.enc, enc), append(wr.descr, descr)
	}
	level := o.Level
	if level == 0 {
		level = 6
	}
	switch o.Compression {
	case "", CompressionNone:
	case CompressionGzip:
		z, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			return nil, fmt.Errorf("%w: level %d: %v", ErrUnsupported, level, err)
		}
		wr.z, w = z, z
	default:
		return nil, fmt.Errorf("%w: compression %q (want none or gzip)", ErrUnsupported, o.Compression)
	}
	wr.bw = bufio.NewWriterSize(w, 1<<20)
	wr.tw = tar.NewWriter(wr.bw)
	return wr, nil
}

// memberExt returns the extension stream st is written with and how its values are encoded.
func memberExt(st *mlfeed.Stream) (ext string, enc kind, descr string, err error) {
	name := st.Name
	switch {
	case st.Storage == mlfeed.Sparse:
		return "", 0, "", format.Needs(fmt.Errorf("%w: stream %q is sparse; a shard holds dense arrays", ErrUnsupported, name), format.ErrNeedsDense)
	case name == "" || name != strings.ToLower(name) || strings.ContainsAny(name, "/\x00\n") || strings.HasSuffix(name, "."):
		return "", 0, "", fmt.Errorf("%w: stream name %q is not a WebDataset extension (lowercase, no '/', not ending in '.'), which the reader would not give back", ErrUnsupported, name)
	}
	k := extKind(name)
	switch t := st.Type; {
	case t == mlfeed.Bytes:
		return name, kindBytes, "", nil
	case t == mlfeed.String:
		if k != kindText {
			name += ".txt"
		}
		return name, kindText, "", nil
	case t == mlfeed.Int64 && k == kindInt && st.Dim == 1 && st.Shape == nil:
		return name, kindInt, "", nil
	case npy.Descr(t) != "":
		if k != kindNpy {
			name += ".npy"
		}
		return name, kindNpy, npy.Descr(t), nil
	}
	return "", 0, "", fmt.Errorf("%w: stream %q holds %s, which a .npy member cannot hold", ErrUnsupported, name, st.Type)
}

// WriteChunk writes the sequences of c, one sample each.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if wr.err != nil {
		return wr.err
	}
	if err := c.Validate(&wr.schema); err != nil {
		return err
	}
	for q := 0; q < c.Sequences; q++ {
		key := fmt.Sprintf("%09d", wr.n)
		if wr.schema.HasIDs && c.IDs != nil {
			key = c.IDs[q]
			if err := checkKey(key, wr.prev); err != nil {
				return fmt.Errorf("sequence %d: %w", wr.n, err)
			}
		}
		if err := wr.sample(c, q, key); err != nil {
			return err
		}
		wr.prev = key
		wr.n++
	}
	return nil
}

// checkKey reports whether key reads back as the key of its members, and as a new sample.
func checkKey(key, prev string) error {
	k, _, ok := SplitName(key + ".x")
	switch {
	case !ok || k != key || strings.ContainsAny(key, "\x00\n") || strings.HasSuffix(key, "/"):
		return fmt.Errorf("%w: id %q is not a WebDataset key (no '.' in its last path component, no NUL or newline)", ErrUnsupported, key)
	case isMeta(key + ".x"):
		return fmt.Errorf("%w: id %q would be skipped as metadata (__NAME__)", ErrUnsupported, key)
	case key == prev:
		return fmt.Errorf("%w: id %q follows a sequence of the same id, and adjacent members of one key make one sample", ErrUnsupported, key)
	}
	return nil
}

// sample writes sequence q of c as the members of key.
func (wr *Writer) sample(c *mlfeed.Chunk, q int, key string) error {
	wrote := false
	for s := range c.Streams {
		d := &c.Streams[s]
		st := &wr.schema.Streams[s]
		n := d.SeqStart[q+1] - d.SeqStart[q]
		if n == 0 {
			continue
		}
		if n > 1 {
			return fmt.Errorf("%w: sequence %d has %d samples of stream %q; a WebDataset sample holds one member per stream", ErrUnsupported, wr.n, n, st.Name)
		}
		from, to := d.SampleRange(st, d.SeqStart[q])
		var payload []byte
		switch wr.enc[s] {
		case kindBytes, kindText:
			v := d.Values.Strings[from]
			payload = unsafe.Slice(unsafe.StringData(v), len(v))
		case kindInt:
			wr.buf = strconv.AppendInt(wr.buf[:0], d.Values.Int64s()[from], 10)
			payload = wr.buf
		case kindNpy:
			shape := st.Shape
			if shape == nil {
				shape = []int{to - from}
			}
			wr.buf = npy.AppendHeader(wr.buf[:0], wr.descr[s], shape)
			wr.buf = npy.AppendData(wr.buf, d.Values.Slice(from, to))
			payload = wr.buf
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: key + "." + wr.exts[s], Mode: 0o644, Size: int64(len(payload)), ModTime: mtime}
		if err := wr.tw.WriteHeader(hdr); err != nil {
			wr.err = err
			return err
		}
		if _, err := wr.tw.Write(payload); err != nil {
			wr.err = err
			return err
		}
		wrote = true
	}
	if !wrote {
		return fmt.Errorf("%w: sequence %d has no sample in any stream, and a shard has no member to keep it", ErrUnsupported, wr.n)
	}
	return nil
}

// Close ends the archive (two zero blocks), flushes and closes the compressor. It does not
// close the underlying writer.
func (wr *Writer) Close() error {
	if wr.tw == nil {
		return wr.err
	}
	err := wr.tw.Close()
	if e := wr.bw.Flush(); err == nil {
		err = e
	}
	if wr.z != nil {
		if e := wr.z.Close(); err == nil {
			err = e
		}
	}
	wr.tw = nil
	if wr.err == nil {
		wr.err = err
	}
	return err
}
