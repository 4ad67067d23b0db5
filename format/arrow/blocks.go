package arrow

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/mlfeed/mlfeed"
)

// The chunk table comes from the IPC framing and the flatbuffer headers alone, without loading
// any record batch: arrow-go's readers decode (and decompress) a batch to learn its length.
// Only the few fields needed are read, with every offset checked against the bytes at hand.

// Message header types (Message.header_type) of the Arrow IPC format.
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// message is one framed IPC message: where it starts, its total size (prefix, metadata and
// body), its type and, for record batches, its row count.
type message struct {
	offset, size int64
	kind         byte
	rows         int64
	body         int64      // body length
	bodyStart    int64      // offset of the body
	compressed   bool       // the record batch's buffers are compressed
	unpacked     int64      // the body's size once decompressed (the body length if not compressed)
	buffers      [][2]int64 // compressed record and dictionary batches: (offset, length) of each buffer
	bigEndian    bool       // a schema whose data is big-endian
}

// fb is a bounds-checked view of a flatbuffer.
type fb struct {
	b   []byte
	err error
}

func (f *fb) u32(pos int64) uint32 {
	if f.err != nil || pos < 0 || pos+4 > int64(len(f.b)) {
		f.fail()
		return 0
	}
	return binary.LittleEndian.Uint32(f.b[pos:])
}

func (f *fb) u16(pos int64) uint16 {
	if f.err != nil || pos < 0 || pos+2 > int64(len(f.b)) {
		f.fail()
		return 0
	}
	return binary.LittleEndian.Uint16(f.b[pos:])
}

func (f *fb) fail() {
	if f.err == nil {
		f.err = fmt.Errorf("%w: flatbuffer offset outside its %d bytes", ErrFormat, len(f.b))
	}
}

// field returns the position of field id of the table at tab, or 0 if absent.
func (f *fb) field(tab int64, id int) int64 {
	vt := tab - int64(int32(f.u32(tab)))
	vtLen := int64(f.u16(vt))
	o := int64(4 + 2*id)
	if o+2 > vtLen {
		return 0
	}
	if rel := int64(f.u16(vt + o)); rel != 0 {
		return tab + rel
	}
	return 0
}

// table follows the offset stored at pos.
func (f *fb) table(pos int64) int64 { return pos + int64(f.u32(pos)) }

func (f *fb) i64(pos int64) int64 {
	lo := f.u32(pos)
	hi := f.u32(pos + 4)
	return int64(uint64(hi)<<32 | uint64(lo))
}

// readMessage reads the framed message at off of r (size bytes in all): the continuation
// marker (or the legacy bare length), the flatbuffer Message, and the body length.
func readMessage(r io.ReaderAt, size, off int64, name string) (message, bool, error) {
	var pre [8]byte
	if off+4 > size {
		return message{}, false, nil // end of stream without an end marker
	}
	if _, err := r.ReadAt(pre[:4], off); err != nil {
		return message{}, false, mlfeed.OffsetError(name, off, "message length", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	head := int64(4)
	metaLen := int64(int32(binary.LittleEndian.Uint32(pre[:4])))
	if binary.LittleEndian.Uint32(pre[:4]) == 0xFFFFFFFF {
		if off+8 > size {
			return message{}, false, mlfeed.OffsetError(name, off, "message length", fmt.Errorf("%w: stream ends inside a message prefix", ErrTruncated))
		}
		if _, err := r.ReadAt(pre[4:8], off+4); err != nil {
			return message{}, false, mlfeed.OffsetError(name, off, "message length", fmt.Errorf("%w: %v", ErrTruncated, err))
		}
		head = 8
		metaLen = int64(int32(binary.LittleEndian.Uint32(pre[4:8])))
	}
	if metaLen == 0 {
		return message{}, false, nil // end-of-stream marker
	}
	if metaLen < 0 || off+head+metaLen > size {
		return message{}, false, mlfeed.OffsetError(name, off, "message length", fmt.Errorf("%w: message metadata of %d bytes, %d left", ErrTruncated, metaLen, size-off-head))
	}
	if metaLen > 64<<20 {
		return message{}, false, mlfeed.OffsetError(name, off, "message length", fmt.Errorf("%w: message metadata of %d bytes (limit 64 MiB)", ErrTooLarge, metaLen))
	}
	buf := make([]byte, metaLen)
	if _, err := r.ReadAt(buf, off+head); err != nil {
		return message{}, false, mlfeed.OffsetError(name, off+head, "message", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	m, err := parseMessage(buf)
	if err != nil {
		return message{}, false, mlfeed.OffsetError(name, off+head, "message", err)
	}
	m.offset = off
	m.body = m.size
	m.bodyStart = off + head + metaLen
	m.size = head + metaLen + m.body // m.size held the body length
	if m.size < 0 || off+m.size > size {
		return message{}, false, mlfeed.OffsetError(name, off+head, "message body", fmt.Errorf("%w: message body ends past the data's %d bytes", ErrTruncated, size))
	}
	return m, true, nil
}

// parseMessage reads the header type, the body length and, for a record batch, the row count
// from a flatbuffer Message. It also checks every offset and vector length arrow-go will
// follow in the message (the schema's fields, a batch's nodes and buffers), since arrow-go
// allocates what a vector length claims before looking at the bytes.
func parseMessage(b []byte) (message, error) {
	f := &fb{b: b}
	msg := f.table(0)
	f.checkTable(msg)
	var m message
	if p := f.field(msg, 1); p != 0 {
		if p >= int64(len(b)) {
			f.fail()
		} else {
			m.kind = b[p]
		}
	}
	if p := f.field(msg, 3); p != 0 {
		m.size = f.i64(p)
	}
	f.kv(f.field(msg, 4))
	if p := f.field(msg, 2); p != 0 {
		h := f.table(p)
		switch m.kind {
		case headerSchema:
			f.checkSchema(h)
			if q := f.field(h, 0); q != 0 { // endianness: 0 little, 1 big
				m.bigEndian = f.u16(q) == 1
			}
		case headerRecordBatch:
			m.rows, m.compressed, m.buffers = f.checkBatch(h)
		case headerDictionaryBatch:
			f.checkTable(h)
			if q := f.field(h, 1); q != 0 {
				_, m.compressed, m.buffers = f.checkBatch(f.table(q))
			}
		}
	}
	if f.err != nil {
		return m, f.err
	}
	if m.size < 0 || m.rows < 0 {
		return m, fmt.Errorf("%w: negative body length or row count", ErrFormat)
	}
	return m, nil
}

// checkTable checks that the vtable of the table at tab lies in the buffer.
func (f *fb) checkTable(tab int64) {
	vt := tab - int64(int32(f.u32(tab)))
	vtLen, tabLen := int64(f.u16(vt)), int64(f.u16(vt+2))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > int64(len(f.b)) || tab+tabLen > int64(len(f.b)) {
		f.fail()
	}
}

// vector checks the vector whose offset is stored at pos (0: absent) and returns the position
// of its first element and its length.
func (f *fb) vector(pos, elem int64) (int64, int64) {
	if pos == 0 || f.err != nil {
		return 0, 0
	}
	v := f.table(pos)
	n := int64(f.u32(v))
	if f.err == nil && (n > int64(len(f.b)) || v+4+n*elem > int64(len(f.b))) {
		f.fail()
		return 0, 0
	}
	return v + 4, n
}

// kv checks a vector of KeyValue tables.
func (f *fb) kv(pos int64) {
	s, n := f.vector(pos, 4)
	for i := int64(0); i < n && f.err == nil; i++ {
		t := f.table(s + 4*i)
		f.checkTable(t)
		f.vector(f.field(t, 0), 1)
		f.vector(f.field(t, 1), 1)
	}
}

// maxFields bounds the fields of a schema: children may share tables, which would otherwise
// make a small schema describe an exponential tree.
const maxFields = 1 << 16

// checkSchema checks a Schema table and its fields.
func (f *fb) checkSchema(tab int64) {
	f.checkTable(tab)
	s, n := f.vector(f.field(tab, 1), 4)
	count := 0
	for i := int64(0); i < n && f.err == nil; i++ {
		f.checkField(f.table(s+4*i), 0, &count)
	}
	f.kv(f.field(tab, 2))
	f.vector(f.field(tab, 3), 8)
}

func (f *fb) checkField(tab int64, depth int, count *int) {
	if *count++; depth > 64 || *count > maxFields {
		f.fail()
		return
	}
	f.checkTable(tab)
	f.vector(f.field(tab, 0), 1)      // name
	if p := f.field(tab, 3); p != 0 { // type
		t := f.table(p)
		f.checkTable(t)
		if tt := f.field(tab, 2); tt != 0 && tt < int64(len(f.b)) && f.b[tt] == 14 { // Union
			f.vector(f.field(t, 1), 4)
		}
	}
	if p := f.field(tab, 4); p != 0 { // dictionary
		d := f.table(p)
		f.checkTable(d)
		if q := f.field(d, 1); q != 0 {
			f.checkTable(f.table(q))
		}
	}
	s, n := f.vector(f.field(tab, 5), 4) // children
	for i := int64(0); i < n && f.err == nil; i++ {
		f.checkField(f.table(s+4*i), depth+1, count)
	}
	f.kv(f.field(tab, 6))
}

// checkBatch checks a RecordBatch table and returns its length, whether its buffers are
// compressed and, if so, the buffers.
func (f *fb) checkBatch(tab int64) (rows int64, compressed bool, bufs [][2]int64) {
	f.checkTable(tab)
	if q := f.field(tab, 0); q != 0 {
		rows = f.i64(q)
	}
	f.vector(f.field(tab, 1), 16) // nodes
	s, n := f.vector(f.field(tab, 2), 16)
	if p := f.field(tab, 3); p != 0 {
		f.checkTable(f.table(p))
		compressed = true
		for i := int64(0); i < n && f.err == nil; i++ {
			bufs = append(bufs, [2]int64{f.i64(s + 16*i), f.i64(s + 16*i + 8)})
		}
	}
	f.vector(f.field(tab, 4), 8) // variadic buffer counts
	return rows, compressed, bufs
}

// unpackedSize returns the sum of the uncompressed lengths a compressed batch's buffers claim
// (the int64 before each buffer's data; -1 means stored uncompressed).
func unpackedSize(r io.ReaderAt, m message) (int64, error) {
	var total int64
	var p [8]byte
	for _, b := range m.buffers {
		if b[1] == 0 {
			continue
		}
		if b[0] < 0 || b[1] < 8 || b[0]+b[1] > m.body {
			return 0, fmt.Errorf("%w: buffer [%d, +%d) outside the body of %d bytes", ErrFormat, b[0], b[1], m.body)
		}
		if _, err := r.ReadAt(p[:], m.bodyStart+b[0]); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrTruncated, err)
		}
		n := int64(binary.LittleEndian.Uint64(p[:]))
		if n == -1 {
			n = b[1] - 8
		}
		if n < 0 || total+n < total {
			return 0, fmt.Errorf("%w: buffer claims %d uncompressed bytes", ErrFormat, n)
		}
		total += n
	}
	return total, nil
}

// fileBlocks reads the record batch blocks of an Arrow IPC file's footer and the row count
// of each batch from its message header, and the number of dictionary batches.
func fileBlocks(r io.ReaderAt, size int64, name string, limit int64) ([]message, int, error) {
	const tail = 10 // int32 footer length + "ARROW1"
	if size < 8+tail {
		return nil, 0, mlfeed.OffsetError(name, 0, "file", fmt.Errorf("%w: %d bytes is too short for an Arrow file", ErrTruncated, size))
	}
	var t [tail]byte
	if _, err := r.ReadAt(t[:], size-tail); err != nil {
		return nil, 0, mlfeed.OffsetError(name, size-tail, "footer", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	if string(t[4:]) != magic {
		return nil, 0, mlfeed.OffsetError(name, size-6, "trailing magic", fmt.Errorf("%w: the file does not end with ARROW1 (truncated, or an IPC stream named .arrow?)", ErrTruncated))
	}
	flen := int64(int32(binary.LittleEndian.Uint32(t[:4])))
	if flen <= 0 || flen > size-tail-8 {
		return nil, 0, mlfeed.OffsetError(name, size-tail, "footer length", fmt.Errorf("%w: footer of %d bytes in a file of %d", ErrFormat, flen, size))
	}
	foot := make([]byte, flen)
	fpos := size - tail - flen
	if _, err := r.ReadAt(foot, fpos); err != nil {
		return nil, 0, mlfeed.OffsetError(name, fpos, "footer", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	f := &fb{b: foot}
	root := f.table(0)
	f.checkTable(root)
	if p := f.field(root, 1); p != 0 {
		f.checkSchema(f.table(p))
	}
	if f.err != nil {
		return nil, 0, mlfeed.OffsetError(name, fpos, "footer", f.err)
	}
	// Dictionary batches: checked as record batches are (arrow-go loads them all at open).
	ds, dn := f.vector(f.field(root, 2), 24)
	for i := int64(0); i < dn && f.err == nil; i++ {
		off := f.i64(ds + 24*i)
		if f.err != nil || off < 0 || off >= fpos {
			return nil, 0, mlfeed.OffsetError(name, fpos, "footer", fmt.Errorf("%w: dictionary batch %d at offset %d outside the file", ErrFormat, i, off))
		}
		m, ok, err := readMessage(r, fpos, off, name)
		if err != nil {
			return nil, 0, err
		}
		if !ok || m.kind != headerDictionaryBatch {
			return nil, 0, mlfeed.OffsetError(name, off, "dictionary batch", fmt.Errorf("%w: footer block %d is not a dictionary batch", ErrFormat, i))
		}
		if err := checkUnpacked(r, &m, name, limit); err != nil {
			return nil, 0, err
		}
	}
	dicts := int(dn)
	p := f.field(root, 3) // recordBatches
	var out []message
	if p != 0 {
		vec, n := f.vector(p, 24)
		for i := int64(0); i < n && f.err == nil; i++ {
			b := vec + 24*i
			off := f.i64(b)
			if f.err != nil {
				break
			}
			if off < 0 || off >= fpos {
				return nil, 0, mlfeed.OffsetError(name, fpos, "footer", fmt.Errorf("%w: record batch %d at offset %d outside the file", ErrFormat, i, off))
			}
			m, ok, err := readMessage(r, fpos, off, name)
			if err != nil {
				return nil, 0, err
			}
			if !ok || m.kind != headerRecordBatch {
				return nil, 0, mlfeed.OffsetError(name, off, "record batch", fmt.Errorf("%w: footer block %d is not a record batch", ErrFormat, i))
			}
			if err := checkUnpacked(r, &m, name, limit); err != nil {
				return nil, 0, err
			}
			out = append(out, m)
		}
	}
	if f.err != nil {
		return nil, 0, mlfeed.OffsetError(name, fpos, "footer", f.err)
	}
	return out, dicts, nil
}

// maxUnpacked bounds what the compressed buffers of one batch may claim to decompress to.
const maxUnpacked = 1 << 30

// checkUnpacked refuses a compressed batch whose buffers claim more than maxUnpacked bytes,
// or more than limit (the memory budget), before arrow-go allocates them.
// It sets m.unpacked.
func checkUnpacked(r io.ReaderAt, m *message, name string, limit int64) error {
	m.unpacked = m.body
	if !m.compressed {
		return nil
	}
	n, err := unpackedSize(r, *m)
	if err != nil {
		return mlfeed.OffsetError(name, m.bodyStart, "compressed buffer", err)
	}
	if n > maxUnpacked {
		return mlfeed.OffsetError(name, m.bodyStart, "compressed buffer", fmt.Errorf("%w: buffers claim %d uncompressed bytes (limit %d)", ErrTooLarge, n, int64(maxUnpacked)))
	}
	if n > limit {
		return mlfeed.OffsetError(name, m.bodyStart, "compressed buffer", fmt.Errorf("%w: the batch's buffers decompress to %d bytes, more than the memory budget of %d bytes (raise it with --memory)", ErrTooLarge, n, limit))
	}
	m.unpacked = n
	return nil
}

// streamMessages reads the framing of an IPC stream: the schema message first, then
// dictionary and record batch messages up to the end marker or the end of the data.
func streamMessages(r io.ReaderAt, size int64, name string, limit int64) ([]message, error) {
	var out []message
	off := int64(0)
	for {
		m, ok, err := readMessage(r, size, off, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if len(out) == 0 && m.kind != headerSchema {
			return nil, mlfeed.OffsetError(name, off, "schema", fmt.Errorf("%w: an IPC stream starts with a schema message, found type %d", ErrFormat, m.kind))
		}
		if len(out) > 0 && m.kind != headerRecordBatch && m.kind != headerDictionaryBatch {
			return nil, mlfeed.OffsetError(name, off, "message", fmt.Errorf("%w: unexpected message type %d", ErrFormat, m.kind))
		}
		if err := checkUnpacked(r, &m, name, limit); err != nil {
			return nil, err
		}
		out = append(out, m)
		off += m.size
		if off >= size {
			break
		}
	}
	if len(out) == 0 {
		return nil, mlfeed.OffsetError(name, 0, "schema", fmt.Errorf("%w: empty IPC stream", ErrTruncated))
	}
	return out, nil
}

// CheckSchemaMessage checks b, one encapsulated IPC message that holds a schema (what Parquet
// writers store under the ARROW:schema footer key): its framing, and every offset and vector
// length arrow-go follows when it decodes the schema, which it allocates before looking at the
// bytes (a corrupt length in a kilobyte would otherwise have it allocate gigabytes).
func CheckSchemaMessage(b []byte) error {
	head := 4
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0xFFFFFFFF {
		head = 8
	}
	if len(b) < head {
		return fmt.Errorf("%w: %d bytes is too short for an IPC message", ErrTruncated, len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[head-4:])))
	if n <= 0 || n > int64(len(b)-head) {
		return fmt.Errorf("%w: message metadata of %d bytes, %d there", ErrFormat, n, len(b)-head)
	}
	m, err := parseMessage(b[head : int64(head)+n])
	switch {
	case err != nil:
		return err
	case m.kind != headerSchema:
		return fmt.Errorf("%w: message of type %d, not a schema", ErrFormat, m.kind)
	case m.size > int64(len(b)-head)-n:
		return fmt.Errorf("%w: message body of %d bytes, %d there", ErrFormat, m.size, int64(len(b)-head)-n)
	}
	return nil
}
