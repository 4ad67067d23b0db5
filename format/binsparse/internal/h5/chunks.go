//go:build cgo && hdf5

package h5

// Direct chunk I/O: libhdf5 stores and fetches the filtered chunks (H5Dwrite_chunk,
// H5Dread_chunk) while they are deflated (klauspost/compress, several times faster than zlib
// at low levels), inflated (zlib's uncompress, faster than Go's) and (un)shuffled on every
// core. The files are the same as libhdf5's own filter pipeline makes: the dataset's pipeline says shuffle
// (optionally) and deflate, and each chunk is a zlib stream of the full chunk (edge chunks
// padded with zeros), which is what every HDF5 reader expects.

/*
#include "bsp_h5.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zlib"

	"github.com/mlfeed/mlfeed"
)

// shuffle transposes the bytes of a chunk of size-byte elements as HDF5's shuffle filter does:
// all first bytes, then all second bytes, and so on.
func shuffle(dst, src []byte, size int) {
	n := len(src) / size
	for j := 0; j < size; j++ {
		out := dst[j*n : (j+1)*n]
		for i := range out {
			out[i] = src[i*size+j]
		}
	}
	copy(dst[n*size:], src[n*size:])
}

// unshuffle reverses shuffle.
func unshuffle(dst, src []byte, size int) {
	n := len(src) / size
	for j := 0; j < size; j++ {
		in := src[j*n : (j+1)*n]
		for i, c := range in {
			dst[i*size+j] = c
		}
	}
	copy(dst[n*size:], src[n*size:])
}

// writeDirect writes b as a new chunked, deflated dataset at loc.
func writeDirect(loc C.hid_t, cname *C.char, code C.int, b mlfeed.Buffer, o WriteOptions) error {
	eb := newErrBuf()
	n := int64(b.Len())
	chunk := min(o.Chunk, n)
	shuf := C.int(0)
	if o.Shuffle {
		shuf = 1
	}
	ds := C.bsp_dset_create(loc, cname, code, C.longlong(n), C.longlong(chunk), C.int(o.Level), shuf, 0, eb.c())
	if ds < 0 {
		return eb.err(errors.New("creating dataset failed"), C.GoString(cname))
	}
	size := b.Type.Size()
	chunkBytes := int(chunk) * size
	nchunks := int((n + chunk - 1) / chunk)
	procs := runtime.GOMAXPROCS(0)
	type result struct {
		data []byte
		err  error
	}
	results := make([]chan result, nchunks)
	for k := range results {
		results[k] = make(chan result, 1)
	}
	window := make(chan struct{}, 2*procs) // chunks compressed but not yet stored
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		work := make(chan int)
		var workers sync.WaitGroup
		for w := 0; w < procs; w++ {
			workers.Add(1)
			go func() {
				defer workers.Done()
				raw := make([]byte, chunkBytes)
				shuffled := make([]byte, chunkBytes)
				var out bytes.Buffer
				zw, _ := zlib.NewWriterLevel(&out, o.Level)
				for k := range work {
					src := b.Bytes[k*chunkBytes : min((k+1)*chunkBytes, len(b.Bytes))]
					if len(src) < chunkBytes { // the edge chunk is stored full size
						clear(raw[copy(raw, src):])
						src = raw
					}
					if o.Shuffle {
						shuffle(shuffled, src, size)
						src = shuffled
					}
					out.Reset()
					zw.Reset(&out)
					_, err := zw.Write(src)
					if err == nil {
						err = zw.Close()
					}
					results[k] <- result{append([]byte(nil), out.Bytes()...), err}
				}
			}()
		}
		for k := 0; k < nchunks; k++ {
			select {
			case window <- struct{}{}:
			case <-stop:
				close(work)
				workers.Wait()
				return
			}
			work <- k
		}
		close(work)
		workers.Wait()
	}()
	var err error
	for k := 0; k < nchunks && err == nil; k++ {
		r := <-results[k]
		if err = r.err; err != nil {
			break
		}
		p := unsafe.Pointer(&r.data[0])
		if C.bsp_chunk_write(ds, C.longlong(int64(k)*chunk), p, C.size_t(len(r.data)), eb.c()) < 0 {
			err = eb.err(errors.New("writing chunk failed"), C.GoString(cname))
		}
		<-window
	}
	close(stop)
	wg.Wait()
	if C.bsp_dset_close(ds, eb.c()) < 0 && err == nil {
		err = eb.err(errors.New("closing dataset failed"), C.GoString(cname))
	}
	return err
}

// directReadable reports whether a dataset can be read chunk by chunk in Go: chunked, one
// dimension, little-endian elements of type t, and a pipeline of deflate with an optional
// shuffle before it.
func directReadable(di *C.dsinfo, t mlfeed.ElemType) (shuffled bool, ok bool) {
	if di.layout != 2 || di.rank != 1 || di.bigendian != 0 || di.chunk <= 0 || di.n == 0 ||
		elemType(int(di.cls), di.sign != 0, int(di.size)) != t {
		return false, false
	}
	deflate, shuffle := int(C.bsp_filter_deflate()), int(C.bsp_filter_shuffle())
	switch {
	case di.nfilters == 1 && int(di.filters[0]) == deflate:
		return false, true
	case di.nfilters == 2 && int(di.filters[0]) == shuffle && int(di.filters[1]) == deflate:
		return true, true
	}
	return false, false
}

// maxChunkBytes bounds the stored size of one chunk this reader accepts (deflate can expand
// incompressible data only slightly).
const maxChunkBytes = 1 << 30

// readDirect reads elements [from, from+len(dst)/size) of the dataset into dst.
func readDirect(loc C.hid_t, cname *C.char, di *C.dsinfo, shuffled bool, dst []byte, size int, from int64) error {
	eb := newErrBuf()
	name := C.GoString(cname)
	ds := C.bsp_dset_open(loc, cname, eb.c())
	if ds < 0 {
		return eb.err(mlfeed.ErrFormat, "cannot open dataset "+name)
	}
	defer C.bsp_dset_close(ds, eb.c())
	chunk := int64(di.chunk)
	chunkBytes := int(chunk) * size
	if chunkBytes > maxChunkBytes {
		return fmt.Errorf("%w: dataset %s has chunks of %d bytes", mlfeed.ErrTooLarge, name, chunkBytes)
	}
	to := from + int64(len(dst)/size)
	first, last := int(from/chunk), int((to-1)/chunk) // the chunks holding [from, to)
	nchunks := last - first + 1
	type job struct {
		k    int
		data []byte
		mask uint32
	}
	procs := runtime.GOMAXPROCS(0)
	jobs := make(chan job, procs)
	errs := make(chan error, nchunks+1) // never blocks a worker
	var wg sync.WaitGroup
	for w := 0; w < procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			plain := make([]byte, chunkBytes)
			var tmp []byte
			for j := range jobs {
				// Mask bits name the filters skipped at write time, in pipeline order.
				skipShuffle, skipDeflate := false, j.mask&1 != 0
				if shuffled {
					skipShuffle, skipDeflate = j.mask&1 != 0, j.mask&2 != 0
				}
				data := j.data
				if !skipDeflate {
					got := C.bsp_inflate(unsafe.Pointer(&plain[0]), C.size_t(len(plain)), unsafe.Pointer(&data[0]), C.size_t(len(data)))
					if got != C.longlong(chunkBytes) {
						msg := fmt.Sprintf("inflates to %d bytes, want %d", got, chunkBytes)
						if got < 0 {
							msg = fmt.Sprintf("zlib error %d", got)
						}
						errs <- fmt.Errorf("%w: dataset %s, chunk %d: deflate data corrupt (%s)", mlfeed.ErrFormat, name, j.k, msg)
						continue
					}
					data = plain
				} else if len(data) != chunkBytes {
					errs <- fmt.Errorf("%w: dataset %s, chunk %d: unfiltered chunk of %d bytes, want %d", mlfeed.ErrFormat, name, j.k, len(data), chunkBytes)
					continue
				}
				if shuffled && !skipShuffle {
					if len(tmp) == 0 {
						tmp = make([]byte, chunkBytes)
					}
					unshuffle(tmp, data, size)
					data = tmp
				}
				// The part of chunk k inside [from, to).
				c0 := int64(j.k) * chunk
				lo, hi := max(c0, from), min(c0+chunk, to)
				copy(dst[(lo-from)*int64(size):(hi-from)*int64(size)], data[(lo-c0)*int64(size):(hi-c0)*int64(size)])
			}
		}()
	}
	var err error
	for k := first; k <= last && err == nil; k++ {
		select {
		case err = <-errs:
			continue
		default:
		}
		off := C.longlong(int64(k) * chunk)
		sz := C.bsp_chunk_size(ds, off, eb.c())
		switch {
		case sz <= 0:
			// Never written (libhdf5 1.10 reports an error for that), or an index libhdf5
			// cannot follow: its own read supplies fill values or the precise error.
			err = errMissingChunk
			continue
		case sz > maxChunkBytes:
			err = fmt.Errorf("%w: dataset %s, chunk %d claims %d bytes", mlfeed.ErrTooLarge, name, k, sz)
			continue
		}
		buf := make([]byte, int(sz))
		var mask C.uint
		if C.bsp_chunk_read(ds, off, unsafe.Pointer(&buf[0]), &mask, eb.c()) < 0 {
			err = eb.err(mlfeed.ErrFormat, fmt.Sprintf("reading dataset %s, chunk %d", name, k))
			continue
		}
		jobs <- job{k, buf, uint32(mask)}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// errMissingChunk makes Read fall back to libhdf5's own read, which supplies the fill value.
var errMissingChunk = errors.New("chunk never written")

// Appender writes a one-dimensional chunked dataset that grows as data is appended: full
// chunks are filtered in Go and stored directly, the last one padded, and the length is set
// on Close. Only Close makes the dataset complete.
type Appender struct {
	f       *File
	ds      C.hid_t
	name    string
	size    int   // bytes per element
	chunk   int64 // elements per chunk
	o       WriteOptions
	pending []byte // appended bytes not yet stored (less than a chunk)
	n       int64  // elements appended
	k       int64  // chunks stored
	zw      *zlib.Writer
	out     bytes.Buffer
	tmp     []byte
	closed  bool
}

// Append creates the growable dataset name of type t in the group at path (creating the group
// if needed), chunked by o.Chunk elements (at least 1), deflated at o.Level (0: unfiltered).
func (f *File) Append(path, name string, t mlfeed.ElemType, o WriteOptions) (*Appender, error) {
	code := typeCode(t)
	if code == 0 {
		return nil, fmt.Errorf("%w: cannot store %s values in HDF5", mlfeed.ErrUnsupported, t)
	}
	o.Chunk = max(1, o.Chunk)
	a := &Appender{f: f, name: name, size: t.Size(), chunk: o.Chunk, o: o}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := f.withGroup(path, true, func(loc C.hid_t) error {
		eb := newErrBuf()
		shuf := C.int(0)
		if o.Shuffle {
			shuf = 1
		}
		a.ds = C.bsp_dset_create(loc, cname, code, 0, C.longlong(o.Chunk), C.int(o.Level), shuf, 1, eb.c())
		if a.ds < 0 {
			return eb.err(errors.New("creating dataset failed"), name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.Level > 0 {
		a.zw, _ = zlib.NewWriterLevel(&a.out, o.Level)
	}
	return a, nil
}

// Write appends b, whole elements of the dataset's type.
func (a *Appender) Write(b []byte) error {
	chunkBytes := int(a.chunk) * a.size
	a.n += int64(len(b) / a.size)
	for len(b) > 0 {
		if len(a.pending) == 0 && len(b) >= chunkBytes {
			if err := a.store(b[:chunkBytes]); err != nil {
				return err
			}
			b = b[chunkBytes:]
			continue
		}
		k := min(chunkBytes-len(a.pending), len(b))
		a.pending = append(a.pending, b[:k]...)
		b = b[k:]
		if len(a.pending) == chunkBytes {
			if err := a.store(a.pending); err != nil {
				return err
			}
			a.pending = a.pending[:0]
		}
	}
	return nil
}

// store filters one full chunk and writes it at the next chunk position.
func (a *Appender) store(raw []byte) error {
	data := raw
	if a.zw != nil {
		if a.o.Shuffle {
			if len(a.tmp) < len(raw) {
				a.tmp = make([]byte, len(raw))
			}
			shuffle(a.tmp[:len(raw)], raw, a.size)
			data = a.tmp[:len(raw)]
		}
		a.out.Reset()
		a.zw.Reset(&a.out)
		if _, err := a.zw.Write(data); err != nil {
			return err
		}
		if err := a.zw.Close(); err != nil {
			return err
		}
		data = a.out.Bytes()
	}
	off := a.k * a.chunk
	err := call(func() error {
		eb := newErrBuf()
		if C.bsp_dset_extend(a.ds, C.longlong(off+a.chunk), eb.c()) < 0 {
			return eb.err(errors.New("growing dataset failed"), a.name)
		}
		if C.bsp_chunk_write(a.ds, C.longlong(off), unsafe.Pointer(&data[0]), C.size_t(len(data)), eb.c()) < 0 {
			return eb.err(errors.New("writing chunk failed"), a.name)
		}
		return nil
	})
	a.k++
	return err
}

// Len returns the number of elements appended.
func (a *Appender) Len() int64 { return a.n }

// Close stores the last, partial chunk (padded with zeros), sets the dataset's length and
// closes it.
func (a *Appender) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	var err error
	if len(a.pending) > 0 {
		chunkBytes := int(a.chunk) * a.size
		last := append(a.pending, make([]byte, chunkBytes-len(a.pending))...)
		err = a.store(last)
	}
	cerr := call(func() error {
		eb := newErrBuf()
		if err == nil && C.bsp_dset_extend(a.ds, C.longlong(a.n), eb.c()) < 0 {
			return eb.err(errors.New("setting the dataset's length failed"), a.name)
		}
		if C.bsp_dset_close(a.ds, eb.c()) < 0 {
			return eb.err(errors.New("closing dataset failed"), a.name)
		}
		return nil
	})
	if err == nil {
		err = cerr
	}
	return err
}
