package webdataset

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/atomicfile"
)

// The index cache (ReaderOptions.CacheIndex), little-endian:
//
//	8 bytes magic "MLFWDSI1", u64 archive size (decompressed), u64 member count n, u64 sample
//	count k, u64 length of the keys, u64 length of the JSON description (cacheDesc), the JSON,
//	the keys, n members (u64 data offset, u64 size, u32 stream), k+1 u64 first members, k u64
//	key ends.
//
// A cache is used only while it is at least as new as the input and every part of it fits the
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

const cacheHead = 48

func (rd *Reader) writeCache(name string) {
	os.Remove(name)
	f, err := atomicfile.Create(name)
	if err != nil {
		return
	}
	desc := cacheDesc{Decode: rd.decode, Skipped: rd.skipped}
	for _, st := range rd.stats {
		cs := cacheStream{Name: st.name, Kind: st.kind, Shape: st.shape, Vary: st.vary, Raw: st.raw, Swap: st.swap}
		if st.kind == kindNpy {
			cs.Type = st.typ.String()
		}
		desc.Streams = append(desc.Streams, cs)
	}
	js, err := json.Marshal(desc)
	if err != nil {
		f.Abort()
		return
	}
	w := bufio.NewWriterSize(f, 1<<16)
	le := binary.LittleEndian
	var b []byte
	b = append(b, cacheMagic...)
	for _, v := range []int{int(rd.size), len(rd.members), rd.Samples(), len(rd.keys), len(js)} {
		b = le.AppendUint64(b, uint64(v))
	}
	b = append(b, js...)
	w.Write(b)
	w.WriteString(rd.keys)
	var x [20]byte
	for _, m := range rd.members {
		le.PutUint64(x[:], uint64(m.off))
		le.PutUint64(x[8:], uint64(m.size))
		le.PutUint32(x[16:], uint32(m.stream))
		w.Write(x[:])
	}
	for _, v := range rd.first {
		le.PutUint64(x[:], uint64(v))
		w.Write(x[:8])
	}
	for _, v := range rd.keyEnd {
		le.PutUint64(x[:], uint64(v))
		w.Write(x[:8])
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return
	}
	if f.Commit() == nil {
		rd.cached = name
	}
}

// loadCache sets the index and schema from the cache when it is fresh and fits the data.
func (rd *Reader) loadCache(name, input string, o *ReaderOptions) bool {
	cst, err := os.Stat(name)
	if err != nil {
		return false
	}
	ist, err := os.Stat(input)
	if err != nil || cst.ModTime().Before(ist.ModTime()) || cst.Size() < cacheHead {
		return false
	}
	// A member takes 512 bytes of header or more, and a cache 44 bytes per member or fewer.
	if cst.Size() > 64<<10+2*rd.size {
		return false
	}
	b, err := os.ReadFile(name)
	if err != nil || len(b) < cacheHead || string(b[:8]) != cacheMagic {
		return false
	}
	le := binary.LittleEndian
	size, n, k, kl, jl := le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:]), le.Uint64(b[32:]), le.Uint64(b[40:])
	if size != uint64(rd.size) || n > size/512 || k > n || kl > size || jl > uint64(len(b)) ||
		uint64(len(b)) != cacheHead+jl+kl+20*n+8*(2*k+1) {
		return false
	}
	var desc cacheDesc
	p := b[cacheHead:]
	if json.Unmarshal(p[:jl], &desc) != nil || desc.Decode != o.Decode || desc.Skipped < 0 {
		return false
	}
	p = p[jl:]
	keys := string(p[:kl])
	p = p[kl:]
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
