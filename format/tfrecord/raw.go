package tfrecord

import (
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mlfeed/mlfeed"
)

// maxRawKept bounds the bytes of small streams (labels) that RawSamples decodes once and keeps
// for the reader's life, over all chunks. Chunks beyond it are decoded by ReadChunk each time.
const maxRawKept = 64 << 20

// rawKeptShare bounds a chunk's kept bytes as a share of its records' bytes: a stream is kept
// decoded only where it is small beside the records (a label beside an image).
const rawKeptShare = 16

// rawChunk is where a chunk's samples lie for RawSamples: per stream, a view of the records
// in memory (the packed values of a float_list, at the same place in records of one length)
// or of values decoded once and kept (small int64 and unpacked float streams).
type rawChunk struct {
	views []rawView
	kept  int64 // bytes of the views decoded and kept
}

type rawView struct {
	b           []byte
	off, stride int
}

// errNotRaw stops the walk of a record laid out otherwise than RawSamples describes.
var errNotRaw = errors.New("tfrecord: not raw")

// notRaw marks a chunk whose samples RawSamples does not describe.
var notRaw = &rawChunk{}

// RawSamples reports where chunk i's samples of a stream lie (mlfeed.RawSampler), for the
// minibatch engine to gather them without decoding the chunk: in an Example file held in
// memory (mapped, or decompressed) whose every stream is one sample of fixed size per record,
// a float_list's packed values where every record of the chunk has the same length and the
// values the same place in it; small int64 (and unpacked float) values, decoded once and kept
// (at most a sixteenth of the chunk's bytes, and 64 MiB in all). ok is false for other chunks,
// which ReadChunk decodes and checks. The first call for a chunk walks its records (checking
// their CRCs where the scan did not) and keeps the answer.
func (rd *Reader) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if rd.raw == nil || i < 0 || i >= len(rd.chunks) || stream < 0 || stream >= len(rd.streams) {
		return nil, 0, 0, 0, false
	}
	rc := rd.raw[i].Load()
	if rc == nil {
		rc = rd.rawLayout(i)
		if rd.raw[i].CompareAndSwap(nil, rc) {
			rd.rawKept.Add(rc.kept)
		} else {
			rc = rd.raw[i].Load()
		}
	}
	if rc == notRaw {
		return nil, 0, 0, 0, false
	}
	v := rc.views[stream]
	return v.b, v.off, v.stride, 0, true
}

// rawReady prepares RawSamples: it answers only for Example files held in memory whose every
// stream is one fixed-size numeric sample per record.
func (rd *Reader) rawReady() {
	if rd.mem == nil || rd.mode != RecordsExample || len(rd.streams) == 0 {
		return
	}
	for s, si := range rd.streams {
		st := &rd.schema.Streams[s]
		if si.list || si.seq || si.dim <= 0 || st.Storage != mlfeed.Dense || st.Type.IsVarLen() || si.kind == kindBytes {
			return
		}
	}
	rd.raw = make([]atomic.Pointer[rawChunk], len(rd.chunks))
}

// rawLayout walks chunk i's records and returns where their samples lie, or notRaw when a
// record is laid out otherwise or is not what the index says (ReadChunk then reports why).
// It reads the mapped file: it runs under internal/mmap's guard, as RawSamples does.
func (rd *Reader) rawLayout(i int) *rawChunk {
	r0, r1 := rd.firstRec[i], rd.firstRec[i+1]
	n := r1 - r0
	if n == 0 || rd.offsets[r1] > int64(len(rd.mem)) {
		return notRaw
	}
	size := rd.offsets[r0+1] - rd.offsets[r0]
	for r := r0 + 1; r <= r1; r++ {
		if rd.offsets[r]-rd.offsets[r-1] != size {
			return notRaw // records of different lengths: no stride
		}
	}
	if size > math.MaxInt32 {
		return notRaw
	}
	base := int(rd.offsets[r0])
	rc := &rawChunk{views: make([]rawView, len(rd.streams))}
	place := make([]int, len(rd.streams)) // per stream: the offset of its values in a record, or -1: kept
	seen := make([]int, len(rd.streams))
	for r := r0; r < r1; r++ {
		off := rd.offsets[r]
		p := rd.mem[off:rd.offsets[r+1]]
		var data []byte
		var err error
		if rd.verified {
			data, _, err = recordAt(p, off, rd.name, int64(r))
		} else {
			data, _, err = checkFrame(p, off, math.MaxInt64, rd.name, int64(r))
		}
		if err != nil {
			return notRaw
		}
		_, err = walkRecord(data, func(key, feat []byte) error {
			s, found := rd.byName[string(key)]
			if !found || seen[s] == r+1 { // not in the index, or twice in the record
				return errNotRaw
			}
			seen[s] = r + 1
			si := &rd.streams[s]
			k, body, err := parseFeature(feat)
			if err != nil || k != si.kind {
				return errNotRaw
			}
			at := -1
			if k == kindFloat {
				at = packedFloats(body, si.dim)
			}
			if at >= 0 {
				at += int(uintptr(unsafe.Pointer(unsafe.SliceData(body))) - uintptr(unsafe.Pointer(unsafe.SliceData(p))))
			}
			if r == r0 {
				place[s] = at
			} else if place[s] != at {
				return errNotRaw
			}
			if at < 0 {
				v := &rc.views[s]
				if v.b == nil {
					v.b = make([]byte, 0, n*si.dim*rd.schema.Streams[s].Type.Size())
				}
				if c, err := appendFixed(&v.b, k, body); err != nil || c != int64(si.dim) {
					return errNotRaw
				}
				if rc.kept += int64(si.dim * rd.schema.Streams[s].Type.Size()); rc.kept > int64(n)*size/rawKeptShare {
					return errNotRaw // not small beside the records
				}
			}
			return nil
		}, nil)
		if err != nil {
			return notRaw
		}
		for s := range rd.streams {
			if seen[s] != r+1 {
				return notRaw // the feature is missing
			}
		}
	}
	if rd.rawKept.Load()+rc.kept > maxRawKept {
		return notRaw
	}
	for s, si := range rd.streams {
		v := &rc.views[s]
		if place[s] >= 0 {
			v.b, v.off, v.stride = rd.mem[base:rd.offsets[r1]], place[s], int(size)
		} else {
			v.off, v.stride = 0, si.dim*rd.schema.Streams[s].Type.Size()
		}
	}
	return rc
}

// packedFloats returns the offset in a FloatList message b of its values when they are one
// packed field of dim floats, the only field, else -1.
func packedFloats(b []byte, dim int) int {
	f, rest, err := next(b, "float_list")
	if err != nil || len(rest) > 0 || f.num != 1 || f.typ != protowire.BytesType || len(f.body) != 4*dim {
		return -1
	}
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(f.body))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// appendFixed appends the values of an int64_list or float_list message b to dst as the data
// model holds them (int64 and float32, little-endian), and returns their number.
func appendFixed(dst *[]byte, k kind, b []byte) (int64, error) {
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
		case k == kindFloat && f.typ == protowire.BytesType && len(f.body)%4 == 0:
			*dst = append(*dst, f.body...)
			n += int64(len(f.body) / 4)
		case k == kindFloat && f.typ == protowire.Fixed32Type:
			*dst = binary.LittleEndian.AppendUint32(*dst, uint32(f.v))
			n++
		case k == kindInt64 && f.typ == protowire.BytesType:
			for p := f.body; len(p) > 0; {
				x, m := protowire.ConsumeVarint(p)
				if m < 0 {
					return 0, errWire
				}
				*dst = binary.LittleEndian.AppendUint64(*dst, x)
				p = p[m:]
				n++
			}
		case k == kindInt64 && f.typ == protowire.VarintType:
			*dst = binary.LittleEndian.AppendUint64(*dst, f.v)
			n++
		default:
			return 0, errWire
		}
	}
	return n, nil
}
