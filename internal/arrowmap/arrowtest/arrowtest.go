// Package arrowtest holds the data the Arrow and Parquet tests share: a schema with a stream
// of every layout the mapping knows, and chunks of it.
package arrowtest

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Schema has a stream of every layout the mapping knows, with metadata.
func Schema() mlfeed.Schema {
	slot := mlfeed.Annotation{Name: "SlotNames",
		Desc: mlfeed.Stream{Type: mlfeed.String, Dim: 2},
		Data: mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"a", "b"}}}}
	return mlfeed.Schema{HasIDs: true, Streams: []mlfeed.Stream{
		{Name: "label", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 1, DefinesMBSize: true},
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 6, Shape: []int{2, 3}, Alias: "img"},
		{Name: "vec", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 2, Metadata: []mlfeed.Annotation{slot}},
		{Name: "var", Storage: mlfeed.Dense, Type: mlfeed.Int16},
		{Name: "bow", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 100},
		{Name: "flag", Storage: mlfeed.Dense, Type: mlfeed.Bool, Dim: 1},
		{Name: "text", Storage: mlfeed.Dense, Type: mlfeed.String, Dim: 1},
		{Name: "key", Storage: mlfeed.Dense, Type: mlfeed.Uint32, Dim: 1, KeyCount: 10},
		{Name: "when", Storage: mlfeed.Dense, Type: mlfeed.DateTime, Dim: 1},
		{Name: "z", Storage: mlfeed.Dense, Type: mlfeed.Complex64, Dim: 1},
	}}
}

// F32 returns a Float32 buffer of v.
func F32(v ...float32) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float32, len(v))
	copy(b.Float32s(), v)
	return b
}

// F64 returns a Float64 buffer of v.
func F64(v ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float64, len(v))
	copy(b.Float64s(), v)
	return b
}

// Raw returns a buffer of n elements of type t whose bytes fill sets.
func Raw(t mlfeed.ElemType, n int, fill func(p []byte)) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, n)
	fill(b.Bytes)
	return b
}

// Chunk returns n sequences of one sample each, with values derived from seed.
func Chunk(n, seed int) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, 10)}
	one := make([]int64, n+1)
	for i := range one {
		one[i] = int64(i)
	}
	for q := 0; q < n; q++ {
		c.IDs = append(c.IDs, "s"+string(rune('a'+(q+seed)%26)))
	}
	c.Streams[0] = mlfeed.StreamData{SeqStart: one, Values: Raw(mlfeed.Uint8, n, func(p []byte) {
		for i := range p {
			p[i] = byte(i + seed)
		}
	})}
	img := make([]float32, 6*n)
	for i := range img {
		img[i] = float32(i*seed) / 7
	}
	c.Streams[1] = mlfeed.StreamData{SeqStart: one, Values: F32(img...)}
	vec := make([]float64, 2*n)
	for i := range vec {
		vec[i] = math.Sqrt(float64(i + seed))
	}
	c.Streams[2] = mlfeed.StreamData{SeqStart: one, Values: F64(vec...)}
	var ss []int64
	var vals []byte
	ss = append(ss, 0)
	for q := 0; q < n; q++ {
		for k := 0; k < q%3; k++ {
			vals = binary.LittleEndian.AppendUint16(vals, uint16(int16(-q*k)))
		}
		ss = append(ss, int64(len(vals)/2))
	}
	c.Streams[3] = mlfeed.StreamData{SeqStart: one, SampleStart: ss, Values: mlfeed.Buffer{Type: mlfeed.Int16, Bytes: vals}}
	var sp []int64
	var ix []int32
	var sv []float32
	sp = append(sp, 0)
	for q := 0; q < n; q++ {
		for k := 0; k < (q+seed)%4; k++ {
			ix = append(ix, int32((q*7+k*13)%100))
			sv = append(sv, float32(q)+float32(k)/2)
		}
		sp = append(sp, int64(len(ix)))
	}
	c.Streams[4] = mlfeed.StreamData{SeqStart: one, SampleStart: sp, Indices: ix, Values: F32(sv...)}
	c.Streams[5] = mlfeed.StreamData{SeqStart: one, Values: Raw(mlfeed.Bool, n, func(p []byte) {
		for i := range p {
			p[i] = byte((i + seed) % 2)
		}
	})}
	txt := make([]string, n)
	for i := range txt {
		txt[i] = strings.Repeat("é", i%4) + "x"
	}
	c.Streams[6] = mlfeed.StreamData{SeqStart: one, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: txt}}
	c.Streams[7] = mlfeed.StreamData{SeqStart: one, Values: Raw(mlfeed.Uint32, n, func(p []byte) {
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(p[4*i:], uint32(i%11))
		}
	})}
	c.Streams[8] = mlfeed.StreamData{SeqStart: one, Values: Raw(mlfeed.DateTime, n, func(p []byte) {
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(p[8*i:], uint64(637000000000000000+int64(i)))
		}
	})}
	c.Streams[9] = mlfeed.StreamData{SeqStart: one, Values: Raw(mlfeed.Complex64, n, func(p []byte) {
		for i := range p {
			p[i] = byte(i * 3)
		}
	})}
	return c
}
