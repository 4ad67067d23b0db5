package tfrecord

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
//	8 bytes magic "MLFTFRI1", u64 data size (decompressed), u64 record count n,
//	u64 length of the JSON description, the JSON description (cacheDesc),
//	n+1 u64 record offsets (the last is the data size), n u64 sequence lengths.
//
// A cache is used only while it is at least as new as the input and every part of it fits the
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
	os.Remove(name)
	f, err := atomicfile.Create(name)
	if err != nil {
		return
	}
	desc := cacheDesc{Asked: asked, Mode: rd.mode, Skipped: rd.skipped}
	for i, st := range rd.schema.Streams {
		si := rd.streams[i]
		desc.Streams = append(desc.Streams, cacheStream{Name: st.Name, List: si.list, Seq: si.seq, Kind: si.kind, Dim: st.Dim, Shape: st.Shape})
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
	b = le.AppendUint64(b, uint64(rd.size))
	b = le.AppendUint64(b, uint64(rd.Records()))
	b = le.AppendUint64(b, uint64(len(js)))
	b = append(b, js...)
	w.Write(b)
	var x [8]byte
	for _, o := range rd.offsets {
		le.PutUint64(x[:], uint64(o))
		w.Write(x[:])
	}
	for _, l := range rd.lengths {
		le.PutUint64(x[:], uint64(l))
		w.Write(x[:])
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
	if err != nil || cst.ModTime().Before(ist.ModTime()) || cst.Size() < 32 {
		return false
	}
	// A cache never holds more than 16 bytes per record, and a record takes 16 bytes or more.
	if cst.Size() > 64<<10+2*rd.size+64 {
		return false
	}
	b, err := os.ReadFile(name)
	if err != nil || len(b) < 32 || string(b[:8]) != cacheMagic {
		return false
	}
	le := binary.LittleEndian
	size, n, jl := le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:])
	if size != uint64(rd.size) || n > uint64(rd.size)/16 || jl > uint64(len(b)) || uint64(len(b)) != 32+jl+(2*n+1)*8 {
		return false
	}
	var desc cacheDesc
	if json.Unmarshal(b[32:32+jl], &desc) != nil || desc.Asked != o.Records || checkRecords(desc.Mode) != nil || desc.Mode == RecordsAuto {
		return false
	}
	p := b[32+jl:]
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
