package tfrecord

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// ReadChunkReuse decodes chunk i into the memory of prev when it is large enough. Bytes
// values point into the records, so that no value is allocated on its own: into the mapped
// file or the decompressed data (valid until Close), or into the chunk's own copy of its
// records when the data is read with ReadAt.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (c *mlfeed.Chunk, err error) {
	if rd.mapped {
		defer mmap.Recover(mmap.Catch(), &err)
	}
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("tfrecord: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r0, r1 := rd.firstRec[i], rd.firstRec[i+1]
	base, end := rd.offsets[r0], rd.offsets[r1]
	var raw []byte
	if rd.mem != nil {
		if end > int64(len(rd.mem)) {
			return nil, mlfeed.OffsetError(rd.name, base, fmt.Sprintf("record %d", r0), fmt.Errorf("%w: the index does not fit the data", ErrFormat))
		}
		raw = rd.mem[base:end:end]
	} else {
		raw = make([]byte, end-base)
		if n, err := rd.ra.ReadAt(raw, base); n < len(raw) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("%w: the data ends at byte %d (file changed since it was opened?)", ErrTruncated, base+int64(n))
			}
			return nil, mlfeed.OffsetError(rd.name, base, fmt.Sprintf("record %d", r0), err)
		}
	}
	c = newChunk(rd, r1-r0, prev)
	d := decoder{rd: rd, c: c}
	for r := r0; r < r1; r++ {
		off := rd.offsets[r]
		var data []byte
		var size int64
		if rd.verified {
			// The scan checked this record's framing and CRCs in the same memory: take its
			// length, within the bounds the index gives.
			data, size, err = recordAt(raw[off-base:rd.offsets[r+1]-base], off, rd.name, int64(r))
		} else {
			data, size, err = checkFrame(raw[off-base:], off, math.MaxInt64, rd.name, int64(r))
		}
		if err != nil {
			return nil, err
		}
		if off+size != rd.offsets[r+1] {
			return nil, recordError(rd.name, int64(r), off, fmt.Errorf("%w: the record does not fit the index (file changed since it was opened?)", ErrFormat))
		}
		if err := d.record(data, int64(r)); err != nil {
			return nil, recordError(rd.name, int64(r), off, err)
		}
	}
	return c, nil
}

// newChunk returns an empty chunk of n sequences, reusing prev's buffers.
func newChunk(rd *Reader, n int, prev *mlfeed.Chunk) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(rd.streams))}
	for s, si := range rd.streams {
		var old mlfeed.StreamData
		if prev != nil && len(prev.Streams) == len(rd.streams) {
			old = prev.Streams[s]
		}
		st := &rd.schema.Streams[s]
		c.Streams[s] = mlfeed.ReuseStream(old, st.Type, si.list && si.dim == 0 && st.Shape == nil)
	}
	return c
}

// decoder fills a chunk record by record.
type decoder struct {
	rd    *Reader
	c     *mlfeed.Chunk
	seen  []int64 // per stream, the last record that had it, plus one
	count []int64 // per stream, the samples so far
	rec   int64
}

func (d *decoder) record(data []byte, rec int64) error {
	if d.seen == nil {
		d.seen = make([]int64, len(d.c.Streams))
		d.count = make([]int64, len(d.c.Streams))
	}
	d.rec = rec
	rd := d.rd
	if rd.mode == RecordsRaw {
		s := &d.c.Streams[0]
		s.Values.Strings = append(s.Values.Strings, unsafe.String(unsafe.SliceData(data), len(data)))
		s.SeqStart = append(s.SeqStart, int64(len(s.Values.Strings)))
		return nil
	}
	var list func(key, fl []byte) error
	if rd.mode == RecordsSequenceExample {
		list = d.featureList
	}
	if _, err := walkRecord(data, d.context, list); err != nil {
		return err
	}
	for s := range d.c.Streams {
		st := &d.c.Streams[s]
		si := &rd.streams[s]
		if d.seen[s] != rec+1 && !si.seq && !si.list {
			return fmt.Errorf("%w: feature %q is missing (file changed since it was opened?)", ErrFormat, rd.schema.Streams[s].Name)
		}
		st.SeqStart = append(st.SeqStart, d.count[s])
	}
	return nil
}

func (d *decoder) stream(key []byte, list bool) (int, error) {
	var s int
	var ok bool
	if list {
		s, ok = d.rd.byName["\x00"+string(key)]
	} else {
		s, ok = d.rd.byName[string(key)]
	}
	if !ok {
		return -1, nil
	}
	if d.seen[s] == d.rec+1 {
		return -1, fmt.Errorf("%w: feature %q appears twice in the record", ErrFormat, key)
	}
	d.seen[s] = d.rec + 1
	return s, nil
}

func (d *decoder) context(key, feat []byte) error {
	k, body, err := parseFeature(feat)
	if err != nil {
		return fmt.Errorf("feature %q: %w", key, err)
	}
	s, err := d.stream(key, false)
	if err != nil {
		return err
	}
	if s < 0 {
		if k == kindNone {
			return nil // a feature of no kind in any record: left out
		}
		return fmt.Errorf("%w: feature %q is not in the index (file changed since it was opened?)", ErrFormat, key)
	}
	si := &d.rd.streams[s]
	if k != si.kind && k != kindNone {
		return fmt.Errorf("%w: feature %q is a %s here, a %s in the schema", ErrFormat, key, k, si.kind)
	}
	n, err := d.appendValues(s, si.kind, body)
	if err != nil {
		return fmt.Errorf("feature %q: %w", key, err)
	}
	if !si.seq && n != int64(si.dim) {
		return fmt.Errorf("%w: feature %q has %d values, not %d as in the index (file changed since it was opened?)", ErrFormat, key, n, si.dim)
	}
	if si.seq {
		d.count[s] += n
	} else {
		d.count[s]++
	}
	return nil
}

func (d *decoder) featureList(key, fl []byte) error {
	s, err := d.stream(key, true)
	if err != nil {
		return err
	}
	var si *streamInfo
	if s >= 0 {
		si = &d.rd.streams[s]
	}
	return walkList(fl, func(feat []byte) error {
		k, body, err := parseFeature(feat)
		if err != nil {
			return fmt.Errorf("feature list %q: %w", key, err)
		}
		if si == nil {
			if k == kindNone {
				return nil
			}
			return fmt.Errorf("%w: feature list %q is not in the index (file changed since it was opened?)", ErrFormat, key)
		}
		if k != si.kind && k != kindNone {
			return fmt.Errorf("%w: feature list %q has a %s here, a %s in the schema", ErrFormat, key, k, si.kind)
		}
		n, err := d.appendValues(s, si.kind, body)
		if err != nil {
			return fmt.Errorf("feature list %q: %w", key, err)
		}
		st := &d.c.Streams[s]
		switch {
		case st.SampleStart != nil:
			st.SampleStart = append(st.SampleStart, int64(st.Values.Len()))
		case n != int64(si.dim):
			return fmt.Errorf("%w: feature list %q has an entry of %d values, not %d as in the index (file changed since it was opened?)", ErrFormat, key, n, si.dim)
		}
		d.count[s]++
		return nil
	})
}

// appendValues appends the values of a list of kind k to stream s and returns their number.
func (d *decoder) appendValues(s int, k kind, b []byte) (int64, error) {
	v := &d.c.Streams[s].Values
	var n int64
	for len(b) > 0 {
		f, rest, err := next(b, k.String())
		if err != nil {
			return 0, err
		}
		b = rest
		if f.num != 1 {
			continue
		}
		switch {
		case k == kindBytes && f.typ == protowire.BytesType:
			v.Strings = append(v.Strings, unsafe.String(unsafe.SliceData(f.body), len(f.body)))
			n++
		case k == kindFloat && f.typ == protowire.BytesType:
			if len(f.body)%4 != 0 {
				return 0, wireErr(fmt.Sprintf("float_list: packed values of %d bytes", len(f.body)), nil)
			}
			v.Bytes = append(v.Bytes, f.body...)
			n += int64(len(f.body) / 4)
		case k == kindFloat && f.typ == protowire.Fixed32Type:
			v.Bytes = binary.LittleEndian.AppendUint32(v.Bytes, uint32(f.v))
			n++
		case k == kindInt64 && f.typ == protowire.BytesType:
			p := f.body
			for len(p) > 0 {
				x, m := protowire.ConsumeVarint(p)
				if m < 0 {
					return 0, wireErr("int64_list", protowire.ParseError(m))
				}
				v.Bytes = binary.LittleEndian.AppendUint64(v.Bytes, x)
				p = p[m:]
				n++
			}
		case k == kindInt64 && f.typ == protowire.VarintType:
			v.Bytes = binary.LittleEndian.AppendUint64(v.Bytes, f.v)
			n++
		default:
			return 0, wireErr(fmt.Sprintf("%s: value has wire type %d", k, f.typ), nil)
		}
	}
	return n, nil
}

// recordAt returns the data of the record that p holds whole, as the index has it, when the
// scan has checked it already.
func recordAt(p []byte, off int64, name string, rec int64) ([]byte, int64, error) {
	if len(p) < headerSize+footerSize || binary.LittleEndian.Uint64(p) != uint64(len(p)-headerSize-footerSize) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: the record does not fit the index", ErrFormat))
	}
	return p[headerSize : len(p)-footerSize], int64(len(p)), nil
}
