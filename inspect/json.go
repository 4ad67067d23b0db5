package inspect

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"unsafe"

	"github.com/mlfeed/mlfeed"
)

// This file renders sequences as the JSON of `cat --json` (DESIGN.md's contract): a dense
// sample is a flat
// list of numbers, a sparse sample {"indices": [...], "values": [...]}, text a JSON string,
// bytes (mlfeed.Bytes) a JSON string of their standard, padded base64.
// NaN and infinities, which JSON cannot hold, are written as null. Complex values are
// [re, im] pairs, DateTimeOffset [ticks, offset minutes], RowID [low, high].

// AppendSequence appends `{"id": ..., "<stream>": [samples...], ...}` for sequence q of c.
func AppendSequence(buf []byte, sc *mlfeed.Schema, c *mlfeed.Chunk, q int) []byte {
	buf = append(buf, '{')
	first := true
	if c.IDs != nil {
		buf = append(buf, `"id":`...)
		buf = strconv.AppendQuote(buf, c.IDs[q])
		first = false
	}
	for i := range sc.Streams {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = strconv.AppendQuote(buf, sc.Streams[i].Name)
		buf = append(buf, ':')
		buf = AppendSamples(buf, &sc.Streams[i], &c.Streams[i], q)
	}
	return append(buf, '}')
}

// AppendSamples appends the list of samples stream d holds for sequence q.
func AppendSamples(buf []byte, st *mlfeed.Stream, d *mlfeed.StreamData, q int) []byte {
	buf = append(buf, '[')
	for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
		if s > d.SeqStart[q] {
			buf = append(buf, ',')
		}
		buf = AppendSample(buf, st, d, s)
	}
	return append(buf, ']')
}

// AppendSample appends sample s of stream d.
func AppendSample(buf []byte, st *mlfeed.Stream, d *mlfeed.StreamData, s int64) []byte {
	from, to := d.SampleRange(st, s)
	if st.Storage == mlfeed.Sparse {
		buf = append(buf, `{"indices":[`...)
		for k := from; k < to; k++ {
			if k > from {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(d.Indices[k]), 10)
		}
		buf = append(buf, `],"values":`...)
		buf = appendValues(buf, d.Values, from, to)
		return append(buf, '}')
	}
	return appendValues(buf, d.Values, from, to)
}

func appendValues(buf []byte, b mlfeed.Buffer, from, to int) []byte {
	buf = append(buf, '[')
	for k := from; k < to; k++ {
		if k > from {
			buf = append(buf, ',')
		}
		buf = AppendValue(buf, b, k)
	}
	return append(buf, ']')
}

// AppendValue appends value k of b.
func AppendValue(buf []byte, b mlfeed.Buffer, k int) []byte {
	le := binary.LittleEndian
	switch t := b.Type; {
	case t == mlfeed.String:
		v, _ := json.Marshal(b.Strings[k])
		return append(buf, v...)
	case t == mlfeed.Bytes:
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, unsafe.Slice(unsafe.StringData(b.Strings[k]), len(b.Strings[k])))
		return append(buf, '"')
	case t == mlfeed.Bool:
		return strconv.AppendBool(buf, b.Bytes[k] != 0)
	case t == mlfeed.Float32:
		return appendFloat(buf, float64(math.Float32frombits(le.Uint32(b.Bytes[4*k:]))), 32)
	case t == mlfeed.Float64:
		return appendFloat(buf, math.Float64frombits(le.Uint64(b.Bytes[8*k:])), 64)
	case t == mlfeed.Uint64:
		return strconv.AppendUint(buf, le.Uint64(b.Bytes[8*k:]), 10)
	case t.IsInteger(), t == mlfeed.Duration, t == mlfeed.DateTime:
		return strconv.AppendInt(buf, b.Int64At(k), 10)
	case t == mlfeed.Complex64:
		buf = append(buf, '[')
		buf = appendFloat(buf, float64(math.Float32frombits(le.Uint32(b.Bytes[8*k:]))), 32)
		buf = append(buf, ',')
		buf = appendFloat(buf, float64(math.Float32frombits(le.Uint32(b.Bytes[8*k+4:]))), 32)
		return append(buf, ']')
	case t == mlfeed.Complex128:
		buf = append(buf, '[')
		buf = appendFloat(buf, math.Float64frombits(le.Uint64(b.Bytes[16*k:])), 64)
		buf = append(buf, ',')
		buf = appendFloat(buf, math.Float64frombits(le.Uint64(b.Bytes[16*k+8:])), 64)
		return append(buf, ']')
	case t == mlfeed.DateTimeOffset:
		buf = append(buf, '[')
		buf = strconv.AppendInt(buf, int64(le.Uint64(b.Bytes[16*k:])), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(int16(le.Uint16(b.Bytes[16*k+8:]))), 10)
		return append(buf, ']')
	case t == mlfeed.RowID:
		buf = append(buf, '[')
		buf = strconv.AppendUint(buf, le.Uint64(b.Bytes[16*k:]), 10)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, le.Uint64(b.Bytes[16*k+8:]), 10)
		return append(buf, ']')
	}
	return append(buf, "null"...)
}

// appendFloat writes the shortest decimal that reads back as the same float of the given bit
// size, or null for NaN and infinities.
func appendFloat(buf []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(buf, "null"...)
	}
	return strconv.AppendFloat(buf, v, 'g', -1, bits)
}

// SampleJSON returns sample s of d as a JSON value.
func SampleJSON(st *mlfeed.Stream, d *mlfeed.StreamData, s int64) json.RawMessage {
	return json.RawMessage(AppendSample(nil, st, d, s))
}
