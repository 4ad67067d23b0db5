package webdataset

import (
	"bufio"
	"encoding/binary"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/indexcache"
)

// The index cache (ReaderOptions.CacheIndex) is a file of package indexcache, little-endian:
//
//	8 bytes magic "MLFWDSI1", u64 archive size (decompressed), counts: u64 member count n,
//	u64 sample count k, u64 length of the keys; the JSON description (cacheDesc); payload:
//	the keys, n members (u64 data offset, u64 size, u32 stream), k+1 u64 first members, k
//	u64 key ends.
//
// A cache is used only while it is fresh (indexcache.Load) and every part of it fits the
// data (sizes, monotone offsets, the options it was built with); otherwise the file is scanned
// again and the cache rewritten.

const cacheMagic = "MLFWDSI1"

// cacheDesc is the JSON part of the cache: what the scan found besides the offsets.
type cacheDesc struct {
	Decode  string        `json:"decode"`
	Skipped int           `json:"skipped"`
	Streams []cacheStream `json:"streams"`
}

type cacheStream struct {
	Name  string `json:"name"`
	Kind  kind   `json:"kind"`
	Type  string `json:"type,omitempty"`
	Shape []int  `json:"shape"`
	Vary  bool   `json:"vary,omitempty"`
	Raw   int64  `json:"raw,omitempty"`
	Swap  int    `json:"swap,omitempty"`
}

func (rd *Reader) writeCache(name string) {
	desc := cacheDesc{Decode: rd.decode, Skipped: rd.skipped}
	for _, st := range rd.stats {
		cs := cacheStream{Name: st.name, Kind: st.kind, Shape: st.shape, Vary: st.vary, Raw: st.raw, Swap: st.swap}
		if st.kind == kindNpy {
			cs.Type = st.typ.String()
		}
		desc.Streams = append(desc.Streams, cs)
	}
	counts := []uint64{uint64(len(rd.members)), uint64(rd.Samples()), uint64(len(rd.keys))}
	if indexcache.Write(name, cacheMagic, rd.size, counts, desc, func(w *bufio.Writer) {
		le := binary.LittleEndian
		w.WriteString(rd.keys)
		var x [20]byte
		for _, m := range rd.members {
			le.PutUint64(x[:], uint64(m.off))
			le.PutUint64(x[8:], uint64(m.size))
			le.PutUint32(x[16:], uint32(m.stream))
			w.Write(x[:])
		}
		for _, v := range rd.first {
			w.Write(le.AppendUint64(x[:0], uint64(v)))
		}
		for _, v := range rd.keyEnd {
			w.Write(le.AppendUint64(x[:0], uint64(v)))
		}
	}) {
		rd.cached = name
	}
}

// loadCache sets the index and schema from the cache when it is fresh and fits the data.
func (rd *Reader) loadCache(name, input string, o *ReaderOptions) bool {
	var desc cacheDesc
	counts, p, ok := indexcache.Load(name, input, cacheMagic, rd.size, 3, &desc)
	if !ok {
		return false
	}
	// A member takes 512 bytes of header or more.
	size, n, k, kl := uint64(rd.size), counts[0], counts[1], counts[2]
	if n > size/512 || k > n || kl > size || uint64(len(p)) != kl+20*n+8*(2*k+1) ||
		desc.Decode != o.Decode || desc.Skipped < 0 {
		return false
	}
	le := binary.LittleEndian
	keys := string(p[:kl])
	p = p[kl:]
	var err error
	var stats []*streamStat
	var streams []mlfeed.Stream
	for i, cs := range desc.Streams {
		st := &streamStat{name: cs.Name, kind: cs.Kind, shape: cs.Shape, vary: cs.Vary, where: "the index", raw: cs.Raw, swap: cs.Swap}
		if cs.Raw < 0 || cs.Raw > rd.size || cs.Swap != 0 && cs.Swap != 2 && cs.Swap != 4 && cs.Swap != 8 {
			return false
		}
		switch {
		case cs.Kind > kindNpy, i > 0 && cs.Name <= desc.Streams[i-1].Name, desc.Decode == DecodeNone && cs.Kind != kindBytes:
			return false
		case cs.Kind == kindNpy:
			if st.typ, err = mlfeed.ParseElemType(cs.Type); err != nil || st.typ.IsVarLen() || st.typ.Size() == 0 || cs.Vary && len(cs.Shape) != 1 {
				return false
			}
			e := int64(st.typ.Size())
			for _, d := range cs.Shape {
				if d < 0 || int64(d) > rd.size || e*int64(d) > rd.size {
					return false
				}
				e *= max(int64(d), 1)
			}
		}
		stats = append(stats, st)
		streams = append(streams, streamOf(st))
	}
	members := make([]member, n)
	var prevEnd int64
	for i := range members {
		m := member{off: int64(le.Uint64(p)), size: int64(le.Uint64(p[8:])), stream: int32(le.Uint32(p[16:]))}
		p = p[20:]
		if m.off < prevEnd+512 || m.size < 0 || m.size > rd.size-m.off || m.stream < 0 || int(m.stream) >= len(stats) {
			return false
		}
		prevEnd = m.off + m.size
		members[i] = m
	}
	first := make([]int, k+1)
	for i := range first {
		first[i] = int(le.Uint64(p))
		p = p[8:]
		if i == 0 && first[0] != 0 || i > 0 && (first[i] <= first[i-1] || first[i] > int(n)) {
			return false
		}
	}
	if first[k] != int(n) {
		return false
	}
	keyEnd := make([]int, k)
	for i := range keyEnd {
		keyEnd[i] = int(le.Uint64(p))
		p = p[8:]
		if keyEnd[i] > len(keys) || i > 0 && keyEnd[i] < keyEnd[i-1] {
			return false
		}
	}
	rd.members, rd.first, rd.keys, rd.keyEnd, rd.skipped = members, first, keys, keyEnd, desc.Skipped
	rd.setStreams(streams, stats)
	rd.cut(o.ChunkSize)
	rd.cached = name
	return true
}
