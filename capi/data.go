//go:build cgo

package main

import (
	"fmt"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// streamsOf returns sc's streams as `info --json` lists them, but for Python: a dense stream
// of single values (Dim 1 and no Shape: a rank-1 IDX file, a 1-D npy array, a CTF stream of
// dimension 1) has the shape [], so that its arrays keep the stored rank, (N,), as numpy
// gives them, where [1] would make them (N, 1). A stream whose Shape is [1] (an IDX file or
// npy array of N x 1) keeps it.
func streamsOf(sc *mlfeed.Schema) []inspect.Stream {
	out := inspect.Streams(sc)
	for i := range out {
		if st := &sc.Streams[i]; st.Storage == mlfeed.Dense && st.Dim == 1 && st.Shape == nil {
			out[i].Shape = []int{}
		}
	}
	return out
}

// A chunk (a read result, or a minibatch's sequences) crosses the ABI in its columnar form, as
// mlfeed.StreamData holds it. Its sizes are an array of int64:
//
//	[0] number of ids (0 when the data set has none)   [1] bytes of the ids, concatenated
//	then, per stream, sizesPerStream entries:
//	[0] len(SeqStart)  [1] len(SampleStart)  [2] len(Indices)  [3] bytes of Values
//	[4] number of strings (String streams)  [5] bytes of the strings, concatenated
//
// The caller allocates a buffer for every non-zero size and passes their addresses in the same
// layout: the ids' offsets (int64, count+1 entries) and bytes, then per stream SeqStart
// (int64), SampleStart (int64), Indices (int32), Values (raw little-endian elements), the
// strings' offsets (int64, count+1) and bytes.
const (
	sizesHeader    = 2
	sizesPerStream = 6
)

// chunkHolder is an object whose current data crosses the ABI: a read result.
type chunkHolder interface {
	current() ([]*mlfeed.Chunk, error)
}

// result is a read result: chunks of one schema, joined as mlfeed.ConcatChunks joins them as
// they cross the ABI (each is copied once, into the caller's buffers).
type result struct{ parts []*mlfeed.Chunk }

func (r *result) current() ([]*mlfeed.Chunk, error) { return r.parts, nil }
func (r *result) close()                            {}

func stringBytes(s []string) int64 {
	var n int64
	for _, v := range s {
		n += int64(len(v))
	}
	return n
}

// chunkSizes writes c's sizes into dst.
func chunkSizes(c *mlfeed.Chunk, dst []int64) error {
	return partsSizes([]*mlfeed.Chunk{c}, dst)
}

// partsSizes writes into dst the sizes of parts (at least one chunk) joined into one.
func partsSizes(parts []*mlfeed.Chunk, dst []int64) error {
	if len(dst) != sizesHeader+sizesPerStream*len(parts[0].Streams) {
		return fmt.Errorf("%w: %d sizes for %d streams", format.ErrUsage, len(dst), len(parts[0].Streams))
	}
	clear(dst)
	for _, c := range parts {
		dst[0] += int64(len(c.IDs))
		dst[1] += stringBytes(c.IDs)
		for i := range c.Streams {
			d := &c.Streams[i]
			s := dst[sizesHeader+sizesPerStream*i:]
			s[0] += int64(len(d.SeqStart) - 1)
			s[1] += int64(max(len(d.SampleStart)-1, 0))
			s[2] += int64(len(d.Indices))
			s[3] += int64(len(d.Values.Bytes))
			s[4] += int64(len(d.Values.Strings))
			s[5] += stringBytes(d.Values.Strings)
		}
	}
	for i := range parts[0].Streams {
		s := dst[sizesHeader+sizesPerStream*i:]
		s[0]++ // the offsets' leading 0
		if parts[0].Streams[i].SampleStart != nil {
			s[1]++
		}
	}
	return nil
}

// bytesAt returns the n bytes at p, a buffer the caller allocated.
func bytesAt(p unsafe.Pointer, n int) []byte {
	if n == 0 {
		return nil
	}
	if p == nil {
		panic("mlfeed: nil buffer for non-empty data")
	}
	return unsafe.Slice((*byte)(p), n)
}

func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// fillStrings writes strings as offsets (int64, len+1) at offs and bytes at data.
func fillStrings(s []string, offs, data unsafe.Pointer) {
	if len(s) == 0 {
		return
	}
	o := unsafe.Slice((*int64)(offs), len(s)+1)
	b := bytesAt(data, int(stringBytes(s)))
	var at int64
	for k, v := range s {
		o[k] = at
		at += int64(copy(b[at:], v))
	}
	o[len(s)] = at
}

// fillParts copies parts (at least one chunk), joined as mlfeed.ConcatChunks joins them, into
// the caller's buffers ptrs, as large as partsSizes said.
func fillParts(parts []*mlfeed.Chunk, ptrs []unsafe.Pointer) error {
	if len(ptrs) != sizesHeader+sizesPerStream*len(parts[0].Streams) {
		return fmt.Errorf("%w: %d buffers for %d streams", format.ErrUsage, len(ptrs), len(parts[0].Streams))
	}
	sizes := make([]int64, len(ptrs))
	if err := partsSizes(parts, sizes); err != nil {
		return err
	}
	for i := range parts[0].Streams {
		p, n := ptrs[sizesHeader+sizesPerStream*i:], sizes[sizesHeader+sizesPerStream*i:]
		seq := unsafe.Slice((*int64)(p[0]), n[0])
		var samp []int64
		if n[1] > 0 {
			samp = unsafe.Slice((*int64)(p[1]), n[1])
		}
		idx := bytesAt(p[2], 4*int(n[2]))
		vals := bytesAt(p[3], int(n[3]))
		var strs []string
		seq[0], seq = 0, seq[1:]
		if samp != nil {
			samp[0], samp = 0, samp[1:]
		}
		var seqBase, sampBase int64
		for _, c := range parts {
			d := &c.Streams[i]
			for k, v := range d.SeqStart[1:] {
				seq[k] = seqBase + v
			}
			seqBase += d.SeqStart[len(d.SeqStart)-1]
			seq = seq[len(d.SeqStart)-1:]
			if len(d.SampleStart) > 0 {
				for k, v := range d.SampleStart[1:] {
					samp[k] = sampBase + v
				}
				sampBase += d.SampleStart[len(d.SampleStart)-1]
				samp = samp[len(d.SampleStart)-1:]
			}
			idx = idx[copy(idx, int32Bytes(d.Indices)):]
			vals = vals[copy(vals, d.Values.Bytes):]
			strs = append(strs, d.Values.Strings...)
		}
		fillStrings(strs, p[4], p[5])
	}
	var ids []string
	for _, c := range parts {
		ids = append(ids, c.IDs...)
	}
	fillStrings(ids, ptrs[0], ptrs[1])
	return nil
}

// fillMapped is fillParts for parts that may alias a mapped file: a file truncated underneath
// by another program faults during the copy, on the caller's thread, and the fault becomes an
// error naming the file and the offset (mmap.ErrChanged) instead of killing the process.
func fillMapped(parts []*mlfeed.Chunk, ptrs []unsafe.Pointer) error {
	return mmap.Guard(func() error { return fillParts(parts, ptrs) })
}

// fillStringsOf copies c's ids and string values into the caller's buffers ptrs (see
// chunkSizes), which hold as many buffers as c needs.
func fillStringsOf(c *mlfeed.Chunk, ptrs []unsafe.Pointer) {
	fillStrings(c.IDs, ptrs[0], ptrs[1])
	for i := range c.Streams {
		p := ptrs[sizesHeader+sizesPerStream*i:]
		fillStrings(c.Streams[i].Values.Strings, p[4], p[5])
	}
}
