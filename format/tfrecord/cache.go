package tfrecord

import (
	"bufio"
	"encoding/binary"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/indexcache"
)

// The index cache (ReaderOptions.CacheIndex) is a file of package indexcache, little-endian:
//
//	8 bytes magic "MLFTFRI1", u64 data size (decompressed), counts: u64 record count n;
//	the JSON description (cacheDesc); payload: n+1 u64 record offsets (the last is the data
//	size), n u64 sequence lengths.
//
// A cache is used only while it is fresh (indexcache.Load) and every part of it fits the
// data (sizes, monotone offsets, the options it was built with); otherwise the file is scanned
// again and the cache rewritten.

const cacheMagic = "MLFTFRI1"

// cacheDesc is the JSON part of the cache: what the scan found besides the offsets.
type cacheDesc struct {
	Asked   string        `json:"asked"` // ReaderOptions.Records when built
	Mode    string        `json:"mode"`
	Streams []cacheStream `json:"streams"`
	Skipped []string      `json:"skipped,omitempty"`
}

type cacheStream struct {
	Name  string `json:"name"`
	List  bool   `json:"list,omitempty"`
	Seq   bool   `json:"seq,omitempty"`
	Kind  kind   `json:"kind"`
	Dim   int    `json:"dim"`
	Shape []int  `json:"shape,omitempty"`
}

func (rd *Reader) writeCache(name string, asked string) {
	desc := cacheDesc{Asked: asked, Mode: rd.mode, Skipped: rd.skipped}
	for i, st := range rd.schema.Streams {
		si := rd.streams[i]
		desc.Streams = append(desc.Streams, cacheStream{Name: st.Name, List: si.list, Seq: si.seq, Kind: si.kind, Dim: st.Dim, Shape: st.Shape})
	}
	if indexcache.Write(name, cacheMagic, rd.size, []uint64{uint64(rd.Records())}, desc, func(w *bufio.Writer) {
		var x [8]byte
		for _, o := range rd.offsets {
			w.Write(binary.LittleEndian.AppendUint64(x[:0], uint64(o)))
		}
		for _, l := range rd.lengths {
			w.Write(binary.LittleEndian.AppendUint64(x[:0], uint64(l)))
		}
	}) {
		rd.cached = name
	}
}

// loadCache sets the index and schema from the cache when it is fresh and fits the data.
func (rd *Reader) loadCache(name, input string, o *ReaderOptions) bool {
	var desc cacheDesc
	counts, p, ok := indexcache.Load(name, input, cacheMagic, rd.size, 1, &desc)
	if !ok {
		return false
	}
	// A record takes 16 bytes or more.
	n := counts[0]
	if n > uint64(rd.size)/16 || uint64(len(p)) != (2*n+1)*8 ||
		desc.Asked != o.Records || checkRecords(desc.Mode) != nil || desc.Mode == RecordsAuto {
		return false
	}
	le := binary.LittleEndian
	offsets := make([]int64, n+1)
	for i := range offsets {
		offsets[i] = int64(le.Uint64(p[8*i:]))
		if i > 0 && offsets[i]-offsets[i-1] < headerSize+footerSize || i == 0 && offsets[0] != 0 {
			return false
		}
	}
	if offsets[n] != rd.size {
		return false
	}
	p = p[8*(n+1):]
	lengths := make([]int64, n)
	for i := range lengths {
		lengths[i] = int64(le.Uint64(p[8*i:]))
		if lengths[i] < 0 || lengths[i] > offsets[i+1]-offsets[i] {
			return false
		}
	}
	var streams []mlfeed.Stream
	var fs []*featStat
	for _, cs := range desc.Streams {
		if cs.Kind > kindInt64 || cs.Dim < 0 || cs.Dim > int(rd.size) || cs.Shape != nil && (len(cs.Shape) != 1 || cs.Shape[0] != 0 || cs.Dim != 0) {
			return false
		}
		if desc.Mode == RecordsRaw {
			fs = append(fs, nil)
		} else {
			if cs.Kind == kindNone {
				return false
			}
			fs = append(fs, &featStat{name: cs.Name, list: cs.List, seq: cs.Seq, kind: cs.Kind})
		}
		streams = append(streams, mlfeed.Stream{Name: cs.Name, Storage: mlfeed.Dense, Type: elemType(cs.Kind), Dim: cs.Dim, Shape: cs.Shape})
	}
	if desc.Mode == RecordsRaw && (len(streams) != 1 || streams[0].Type != mlfeed.Bytes) {
		return false
	}
	rd.mode, rd.offsets, rd.lengths, rd.skipped = desc.Mode, offsets, lengths, desc.Skipped
	rd.setStreams(streams, fs)
	rd.cut(o.ChunkSize)
	rd.cached = name
	return true
}
