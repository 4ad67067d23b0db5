package npy

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/spill"
)

// WriterOptions control writing. The zero value writes a .npy file, spooling the data to a
// temporary file because the record count is not known in advance.
type WriterOptions struct {
	// Archive writes an .npz archive with one member per stream, as numpy.savez does.
	// Without it the schema must have exactly one stream, written as a .npy file.
	Archive bool
	// Compress deflates the archive's members, as numpy.savez_compressed does.
	Compress bool
	// Records is the number of records that will be written, when known. A .npy writer of
	// a numeric stream then writes straight through (its header states the count), having
	// reserved the data's disk blocks first when it writes to a file, as numpy.save does;
	// Close fails if a different number arrived. Zero means unknown.
	Records int64
	// TempDir holds the temporary files that data waits in until the record count is known
	// (every .npz member, and .npy files when Records is zero). Empty means os.TempDir().
	TempDir string
}

// Writer writes streams as NumPy arrays. It implements mlfeed.Sink.
type Writer struct {
	w       io.Writer
	opts    WriterOptions
	schema  mlfeed.Schema
	members []*member
	records int64
	direct  bool // .npy written straight to w
	closed  bool
	scratch []byte // DateTime values as numpy's counts from 1970
}

// member is one array being written: its stream, its record shape, and the spooled data.
type member struct {
	stream *mlfeed.Stream
	descr  string
	shape  []int    // record shape
	spool  *os.File // data bytes, or (strings) uvarint-length-prefixed UTF-8
	buf    *bufio.Writer
	chars  int // strings: the longest, in characters
}

// NewWriter returns a writer of schema's streams to w. Every stream must be dense with a
// fixed shape, of a numeric, bool, complex, string, datetime or duration type (written as
// numpy's datetime64[100ns] and timedelta64[100ns]).
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	if err := schema.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if !opts.Archive && len(schema.Streams) != 1 {
		return nil, fmt.Errorf("%w: a .npy file holds one array; the data has %d streams (write an .npz archive)", ErrUnsupported, len(schema.Streams))
	}
	wr := &Writer{w: w, opts: *opts, schema: schema}
	for i := range schema.Streams {
		st := &wr.schema.Streams[i]
		m := &member{stream: st}
		if st.Storage != mlfeed.Dense {
			return nil, format.Needs(fmt.Errorf("%w: stream %q is sparse; NumPy arrays hold dense data only", ErrUnsupported, st.Name), format.ErrNeedsDense)
		}
		if st.Dim == 0 && st.Shape == nil {
			return nil, fmt.Errorf("%w: stream %q has samples of varying size; an array's records have one shape", ErrUnsupported, st.Name)
		}
		if st.Type != mlfeed.String {
			if m.descr = Descr(st.Type); m.descr == "" {
				return nil, fmt.Errorf("%w: stream %q holds %s, which has no NumPy dtype", ErrUnsupported, st.Name, st.Type)
			}
		}
		switch {
		case st.Shape != nil:
			m.shape = st.Shape
		case st.Dim != 1:
			m.shape = []int{st.Dim}
		}
		wr.members = append(wr.members, m)
	}
	wr.direct = !opts.Archive && opts.Records > 0 && schema.Streams[0].Type != mlfeed.String
	if wr.direct {
		m := wr.members[0]
		if _, err := w.Write(AppendHeader(nil, m.descr, append([]int{int(opts.Records)}, m.shape...))); err != nil {
			return nil, err
		}
		size, fits := opts.Records, true
		for _, d := range append([]int{m.stream.Type.Size()}, m.shape...) {
			fits = fits && (d == 0 || size <= math.MaxInt64/int64(d))
			size *= int64(d)
		}
		if fits { // else more than any disk holds: the writes will say so
			preallocate(w, size)
		}
	} else {
		for _, m := range wr.members {
			f, err := os.CreateTemp(opts.TempDir, "mlfeed-npy-*")
			if err != nil {
				wr.cleanup()
				return nil, spill.TempError(spoolWhat, err)
			}
			os.Remove(f.Name())
			m.spool, m.buf = f, bufio.NewWriterSize(spill.TempWriter{File: f, What: spoolWhat}, 1<<20)
		}
	}
	return wr, nil
}

// WriteChunk appends the chunk's sequences as records. Every sequence must hold exactly one
// sample of every stream.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if wr.closed {
		return errors.New("npy: WriteChunk after Close")
	}
	if err := c.Validate(&wr.schema); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	for k, m := range wr.members {
		d := &c.Streams[k]
		for q := 0; q < c.Sequences; q++ {
			if n := d.SeqStart[q+1] - d.SeqStart[q]; n != 1 {
				return fmt.Errorf("%w: sequence %d has %d samples of stream %q; an array record is one sample", ErrUnsupported, wr.records+int64(q), n, m.stream.Name)
			}
		}
		var err error
		b := d.Values.Bytes
		if m.stream.Type == mlfeed.DateTime {
			wr.scratch = AppendData(wr.scratch[:0], d.Values)
			b = wr.scratch
		}
		switch {
		case m.stream.Type == mlfeed.String:
			err = m.writeStrings(d.Values.Strings, wr.records)
		case wr.direct:
			_, err = wr.w.Write(b)
		default:
			_, err = m.buf.Write(b)
		}
		if err != nil {
			return err
		}
	}
	wr.records += int64(c.Sequences)
	return nil
}

func (m *member) writeStrings(ss []string, first int64) error {
	var lb [binary.MaxVarintLen64]byte
	for k, s := range ss {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: stream %q, record %d: text is not UTF-8", ErrUnsupported, m.stream.Name, first+int64(k))
		}
		if len(s) > 0 && s[len(s)-1] == 0 {
			return fmt.Errorf("%w: stream %q, record %d: text ends in NUL, which NumPy strings drop", ErrUnsupported, m.stream.Name, first+int64(k))
		}
		m.chars = max(m.chars, utf8.RuneCountInString(s))
		m.buf.Write(lb[:binary.PutUvarint(lb[:], uint64(len(s)))])
		if _, err := m.buf.WriteString(s); err != nil {
			return err
		}
	}
	return nil
}

// Close writes what waits in temporary files (the .npy header and data, or the .npz
// archive), and removes them. It does not close the underlying writer.
func (wr *Writer) Close() error {
	if wr.closed {
		return nil
	}
	wr.closed = true
	defer wr.cleanup()
	if wr.direct {
		if wr.records != wr.opts.Records {
			return fmt.Errorf("npy: %d records written, %d announced", wr.records, wr.opts.Records)
		}
		return nil
	}
	for _, m := range wr.members {
		if err := m.buf.Flush(); err != nil {
			return err
		}
		if m.stream.Type == mlfeed.String {
			m.descr = StringDescr(max(m.chars, 1))
		}
	}
	if !wr.opts.Archive {
		bw := bufio.NewWriterSize(wr.w, 1<<20)
		if err := wr.members[0].writeArray(bw, wr.records); err != nil {
			return err
		}
		return bw.Flush()
	}
	return wr.writeArchive()
}

// spoolWhat is what the temporary files hold, for their errors.
const spoolWhat = "the data until its size is known"

// header returns the member's .npy header for n records.
func (m *member) header(n int64) []byte {
	return AppendHeader(nil, m.descr, append([]int{int(n)}, m.shape...))
}

// writeArray writes the member as a .npy array of n records: header, then data.
func (m *member) writeArray(w io.Writer, n int64) error {
	if _, err := w.Write(m.header(n)); err != nil {
		return err
	}
	if _, err := m.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(m.spool, 1<<20)
	if m.stream.Type != mlfeed.String {
		_, err := io.Copy(w, r)
		return err
	}
	width := 4 * max(m.chars, 1)
	cell := make([]byte, width)
	var text []byte
	for {
		l, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if cap(text) < int(l) {
			text = make([]byte, l)
		}
		text = text[:l]
		if _, err := io.ReadFull(r, text); err != nil {
			return err
		}
		clear(cell)
		p := 0
		for _, c := range string(text) {
			binary.LittleEndian.PutUint32(cell[p:], uint32(c))
			p += 4
		}
		if _, err := w.Write(cell); err != nil {
			return err
		}
	}
}

func (wr *Writer) cleanup() {
	for _, m := range wr.members {
		if m.spool != nil {
			m.spool.Close()
			m.spool = nil
		}
	}
}

// zip64Limit is Python's zipfile.ZIP64_LIMIT: sizes and offsets above it need ZIP64 fields.
const zip64Limit = 1<<31 - 1

// zipEntry is what the central directory needs to know of a member.
type zipEntry struct {
	name          string
	crc           uint32
	csize, usize  int64
	offset        int64
	version       uint16 // version needed (and made by) after the local header was written
	method, flags uint16
}

// writeArchive writes the members as Python's zipfile does for numpy.savez: for each, a
// local header with a ZIP64 extra field (numpy forces ZIP64), the data, then the central
// directory and the end record. Times are zipfile's default, 1980-01-01 00:00:00.
func (wr *Writer) writeArchive() error {
	cw := &countWriter{w: bufio.NewWriterSize(wr.w, 1<<20)}
	var entries []zipEntry
	for _, m := range wr.members {
		e := zipEntry{name: m.stream.Name + ".npy", offset: cw.n, version: 20}
		if !isASCII(e.name) {
			e.flags |= 0x800
		}
		// The CRC and sizes come first in the file: compute them in a first pass.
		crc := crc32.NewIEEE()
		e.usize = 0
		var body io.Reader
		var deflated *os.File
		if wr.opts.Compress {
			e.method = 8
			f, err := os.CreateTemp(wr.opts.TempDir, "mlfeed-npz-*")
			if err != nil {
				return spill.TempError(spoolWhat, err)
			}
			os.Remove(f.Name())
			defer f.Close()
			fw, _ := flate.NewWriter(spill.TempWriter{File: f, What: spoolWhat}, 6) // zlib's default level, as Python's zipfile uses
			cnt := &countWriter{w: io.MultiWriter(fw, crc)}
			if err := m.writeArray(cnt, wr.records); err != nil {
				return err
			}
			if err := fw.Close(); err != nil {
				return err
			}
			e.usize = cnt.n
			if e.csize, err = f.Seek(0, io.SeekCurrent); err != nil {
				return err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			deflated, body = f, bufio.NewReaderSize(f, 1<<20)
		} else {
			cnt := &countWriter{w: crc}
			if err := m.writeArray(cnt, wr.records); err != nil {
				return err
			}
			e.usize, e.csize = cnt.n, cnt.n
		}
		e.crc = crc.Sum32()
		if e.usize > zip64Limit || e.csize > zip64Limit {
			e.version = 45
		}
		usize32, csize32 := uint32(e.usize), uint32(e.csize)
		if e.version == 45 {
			usize32, csize32 = 0xFFFFFFFF, 0xFFFFFFFF
		}
		h := make([]byte, 0, 30+len(e.name)+20)
		h = binary.LittleEndian.AppendUint32(h, 0x04034b50)
		h = binary.LittleEndian.AppendUint16(h, e.version)
		h = binary.LittleEndian.AppendUint16(h, e.flags)
		h = binary.LittleEndian.AppendUint16(h, e.method)
		h = binary.LittleEndian.AppendUint16(h, 0)    // time 00:00:00
		h = binary.LittleEndian.AppendUint16(h, 0x21) // date 1980-01-01
		h = binary.LittleEndian.AppendUint32(h, e.crc)
		h = binary.LittleEndian.AppendUint32(h, csize32)
		h = binary.LittleEndian.AppendUint32(h, usize32)
		h = binary.LittleEndian.AppendUint16(h, uint16(len(e.name)))
		h = binary.LittleEndian.AppendUint16(h, 20)
		h = append(h, e.name...)
		h = binary.LittleEndian.AppendUint16(h, 1)
		h = binary.LittleEndian.AppendUint16(h, 16)
		h = binary.LittleEndian.AppendUint64(h, uint64(e.usize))
		h = binary.LittleEndian.AppendUint64(h, uint64(e.csize))
		if _, err := cw.Write(h); err != nil {
			return err
		}
		if deflated != nil {
			if _, err := io.Copy(cw, body); err != nil {
				return err
			}
		} else if err := m.writeArray(cw, wr.records); err != nil {
			return err
		}
		entries = append(entries, e)
	}
	cdStart := cw.n
	for _, e := range entries {
		var extra []uint64
		usize32, csize32, off32 := uint32(e.usize), uint32(e.csize), uint32(e.offset)
		if e.usize > zip64Limit || e.csize > zip64Limit {
			extra = append(extra, uint64(e.usize), uint64(e.csize))
			usize32, csize32 = 0xFFFFFFFF, 0xFFFFFFFF
		}
		if e.offset > zip64Limit {
			extra = append(extra, uint64(e.offset))
			off32 = 0xFFFFFFFF
		}
		v := e.version
		if len(extra) > 0 {
			v = 45
		}
		h := make([]byte, 0, 46+len(e.name)+4+8*len(extra))
		h = binary.LittleEndian.AppendUint32(h, 0x02014b50)
		h = append(h, byte(v), 3) // made by: version, Unix
		h = binary.LittleEndian.AppendUint16(h, v)
		h = binary.LittleEndian.AppendUint16(h, e.flags)
		h = binary.LittleEndian.AppendUint16(h, e.method)
		h = binary.LittleEndian.AppendUint16(h, 0)
		h = binary.LittleEndian.AppendUint16(h, 0x21)
		h = binary.LittleEndian.AppendUint32(h, e.crc)
		h = binary.LittleEndian.AppendUint32(h, csize32)
		h = binary.LittleEndian.AppendUint32(h, usize32)
		h = binary.LittleEndian.AppendUint16(h, uint16(len(e.name)))
		xl := 0
		if len(extra) > 0 {
			xl = 4 + 8*len(extra)
		}
		h = binary.LittleEndian.AppendUint16(h, uint16(xl))
		h = binary.LittleEndian.AppendUint16(h, 0)         // comment
		h = binary.LittleEndian.AppendUint16(h, 0)         // disk
		h = binary.LittleEndian.AppendUint16(h, 0)         // internal attributes
		h = binary.LittleEndian.AppendUint32(h, 0o600<<16) // external: rw-------
		h = binary.LittleEndian.AppendUint32(h, off32)
		h = append(h, e.name...)
		if len(extra) > 0 {
			h = binary.LittleEndian.AppendUint16(h, 1)
			h = binary.LittleEndian.AppendUint16(h, uint16(8*len(extra)))
			for _, x := range extra {
				h = binary.LittleEndian.AppendUint64(h, x)
			}
		}
		if _, err := cw.Write(h); err != nil {
			return err
		}
	}
	end := cw.n
	count, size, offset := int64(len(entries)), end-cdStart, cdStart
	var t []byte
	if count > 0xFFFF || offset > zip64Limit || size > zip64Limit {
		t = binary.LittleEndian.AppendUint32(t, 0x06064b50)
		t = binary.LittleEndian.AppendUint64(t, 44)
		t = binary.LittleEndian.AppendUint16(t, 45)
		t = binary.LittleEndian.AppendUint16(t, 45)
		t = binary.LittleEndian.AppendUint32(t, 0)
		t = binary.LittleEndian.AppendUint32(t, 0)
		t = binary.LittleEndian.AppendUint64(t, uint64(count))
		t = binary.LittleEndian.AppendUint64(t, uint64(count))
		t = binary.LittleEndian.AppendUint64(t, uint64(size))
		t = binary.LittleEndian.AppendUint64(t, uint64(offset))
		t = binary.LittleEndian.AppendUint32(t, 0x07064b50)
		t = binary.LittleEndian.AppendUint32(t, 0)
		t = binary.LittleEndian.AppendUint64(t, uint64(end))
		t = binary.LittleEndian.AppendUint32(t, 1)
		count, size, offset = min(count, 0xFFFF), min(size, 0xFFFFFFFF), min(offset, 0xFFFFFFFF)
	}
	t = binary.LittleEndian.AppendUint32(t, 0x06054b50)
	t = binary.LittleEndian.AppendUint32(t, 0) // disks
	t = binary.LittleEndian.AppendUint16(t, uint16(count))
	t = binary.LittleEndian.AppendUint16(t, uint16(count))
	t = binary.LittleEndian.AppendUint32(t, uint32(size))
	t = binary.LittleEndian.AppendUint32(t, uint32(offset))
	t = binary.LittleEndian.AppendUint16(t, 0) // comment
	if _, err := cw.Write(t); err != nil {
		return err
	}
	return cw.w.(*bufio.Writer).Flush()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
