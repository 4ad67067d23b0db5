package npy

import (
	"archive/zip"
	"fmt"
	"io"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// planInflate decides how the deflated member a, whose local header is at at, is read: whole
// into memory on first use when its data fits a quarter of the memory budget, else a chunk at
// a time (inflater). A member whose records do not fit that quarter, or a Fortran-order one
// (transposed whole) larger than it, is refused before anything is inflated, with its size and
// the option that raises the budget.
func (rd *Reader) planInflate(a *array, at int64) error {
	n, _ := a.h.DataSize()
	quarter := rd.memory / 4
	if n <= quarter {
		return nil
	}
	rec := int64(a.h.RecordElems() * a.h.ItemSize)
	var why string
	switch {
	case a.fortran():
		why = fmt.Sprintf("a Fortran-order member is transposed whole, and its %d data bytes", n)
	case rec > quarter:
		why = fmt.Sprintf("each of its records (shape %v) holds %d bytes, which", a.h.RecordShape(), rec)
	}
	if why != "" {
		return mlfeed.OffsetError(rd.name, at, a.member, fmt.Errorf("%w: deflated member of %d bytes (shape %v): %s exceed a quarter of the memory budget of %d bytes (raise it with --memory)", ErrTooLarge, a.deflated.UncompressedSize64, a.h.Shape, why, rd.memory))
	}
	a.inflate = &inflater{f: a.deflated, name: rd.name, member: a.member, skip: a.h.DataOffset, size: n, keep: min(quarter, maxKept)}
	return nil
}

// maxKept bounds the bytes of passed-over ranges an inflater keeps: enough chunks of the
// default size for read-ahead on 16 threads.
const maxKept = 64 << 20

// inflater reads a deflated member's data a range at a time, holding no more of it than the
// range asked for and a few ranges it passed over on the way (kept for readers that ask for
// chunks slightly out of order, as read-ahead does). A range before the position reached
// starts the member over: random access costs a pass over the member's start.
type inflater struct {
	f      *zip.File
	name   string // the file, for errors
	member string
	skip   int64 // header bytes before the data
	size   int64 // data bytes
	keep   int64 // most bytes of passed-over ranges kept

	mu    sync.Mutex
	zr    io.ReadCloser
	pos   int64  // data bytes consumed from zr
	spare []span // ranges passed over, oldest first
	held  int64  // bytes in spare
}

// span is a range of data bytes kept in memory.
type span struct {
	lo  int64
	buf []byte
}

// read fills dst with the data bytes from lo.
func (z *inflater) read(dst []byte, lo int64) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	for k, s := range z.spare {
		if s.lo == lo && len(s.buf) == len(dst) {
			copy(dst, s.buf)
			z.spare = append(z.spare[:k], z.spare[k+1:]...)
			z.held -= int64(len(s.buf))
			return nil
		}
	}
	if z.zr == nil || z.pos > lo {
		if err := z.restart(); err != nil {
			return err
		}
	}
	// Pass over the bytes before lo in pieces of len(dst) (the chunk size, as the reader
	// asks for chunks), keeping the last few.
	for z.pos < lo {
		n := min(int64(len(dst)), lo-z.pos)
		if n == int64(len(dst)) && n <= z.keep {
			buf := make([]byte, n)
			if err := z.fill(buf); err != nil {
				return err
			}
			z.spare = append(z.spare, span{lo: z.pos - n, buf: buf})
			z.held += n
			for z.held > z.keep {
				z.held -= int64(len(z.spare[0].buf))
				z.spare = z.spare[1:]
			}
			continue
		}
		if _, err := io.CopyN(io.Discard, z.zr, n); err != nil {
			return z.fail(err)
		}
		z.pos += n
	}
	if err := z.fill(dst); err != nil {
		return err
	}
	if z.pos == z.size {
		// The end: what follows must be nothing, and the CRC must match.
		if _, err := io.Copy(io.Discard, z.zr); err != nil {
			return z.fail(err)
		}
		z.close()
	}
	return nil
}

// fill reads len(buf) data bytes at the position.
func (z *inflater) fill(buf []byte) error {
	if _, err := io.ReadFull(z.zr, buf); err != nil {
		return z.fail(err)
	}
	z.pos += int64(len(buf))
	return nil
}

// restart opens the member afresh and passes over its header.
func (z *inflater) restart() error {
	z.close()
	zr, err := z.f.Open()
	if err != nil {
		return mlfeed.OffsetError(z.name, 0, z.member, fmt.Errorf("%w: %v", ErrFormat, err))
	}
	z.zr = zr
	if _, err := io.CopyN(io.Discard, zr, z.skip); err != nil {
		return z.fail(err)
	}
	z.pos = 0
	return nil
}

// fail closes the stream and describes err, an error of inflating.
func (z *inflater) fail(err error) error {
	z.close()
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return mlfeed.OffsetError(z.name, 0, z.member, fmt.Errorf("%w: inflating: the member ends early", ErrTruncated))
	}
	return mlfeed.OffsetError(z.name, 0, z.member, fmt.Errorf("%w: inflating: %v", ErrFormat, err))
}

func (z *inflater) close() {
	if z.zr != nil {
		z.zr.Close()
		z.zr = nil
	}
}

// closeStream ends an unfinished inflation (Reader.Close).
func (z *inflater) closeStream() {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.close()
	z.spare, z.held = nil, 0
}
