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
	m.size = head + metaLen + m.size // m.size held the body length
	if m.size < 0 || off+m.size > size {
		return message{}, false, mlfeed.OffsetError(name, off+head, "message body", fmt.Errorf("%w: message body ends past the data's %d bytes", ErrTruncated, size))
	}
	return m, true, nil
}

// parseMessage reads the header type, the body length and, for a record batch, the row count
// from a flatbuffer Message.
func parseMessage(b []byte) (message, error) {
	f := &fb{b: b}
	msg := f.table(0)
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
	if m.kind == headerRecordBatch {
		if p := f.field(msg, 2); p != 0 {
			rb := f.table(p)
			if q := f.field(rb, 0); q != 0 {
				m.rows = f.i64(q)
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

// fileBlocks reads the record batch blocks of an Arrow IPC file's footer and the row count
// of each batch from its message header, and the number of dictionary batches.
func fileBlocks(r io.ReaderAt, size int64, name string) ([]message, int, error) {
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
	dicts := 0
	if p := f.field(root, 2); p != 0 { // dictionaries
		dicts = int(f.u32(f.table(p)))
	}
	p := f.field(root, 3) // recordBatches
	var out []message
	if p != 0 {
		vec := f.table(p)
		n := int64(f.u32(vec))
		if f.err == nil && n > (int64(len(foot))-vec)/24 {
			return nil, 0, mlfeed.OffsetError(name, fpos, "footer", fmt.Errorf("%w: %d record batch blocks in a footer of %d bytes", ErrFormat, n, flen))
		}
		for i := int64(0); i < n && f.err == nil; i++ {
			b := vec + 4 + 24*i
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
			out = append(out, m)
		}
	}
	if f.err != nil {
		return nil, 0, mlfeed.OffsetError(name, fpos, "footer", f.err)
	}
	return out, dicts, nil
}

// streamMessages reads the framing of an IPC stream: the schema message first, then
// dictionary and record batch messages up to the end marker or the end of the data.
func streamMessages(r io.ReaderAt, size int64, name string) ([]message, error) {
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
