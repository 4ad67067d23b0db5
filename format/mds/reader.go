package mds

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// ReaderOptions configures a Reader. The zero value is the documented default.
type ReaderOptions struct {
	// ChunkSize is the number of bytes of samples per chunk (whole samples of one shard, at
	// least one); zero means DefaultChunkSize.
	ChunkSize int64
	// MaxMemory bounds the decompressed shards held in memory at once; a compressed shard that
	// decompresses to more is an error (mlfeed.ErrTooLarge). Zero means DefaultMaxMemory.
	MaxMemory int64
	// PickleAsBytes reads pkl columns as the pickled bytes (never unpickled) rather than
	// refusing them.
	PickleAsBytes bool
	// VerifyHashes checks each shard file, when first read, against a digest index.json
	// records for it (the first of its algorithms mlfeed computes), as Streaming's
	// validate_hash does; a mismatch is an error (mlfeed.ErrFormat).
	VerifyHashes bool
}

// Reader reads an MDS data set as an mlfeed.Source. Its methods may be called from several
// goroutines at once.
type Reader struct {
	dir     string
	index   *Index
	cols    []column
	first   []int // each column's first stream
	schema  mlfeed.Schema
	nvar    int   // columns of variable size
	fixed   int   // bytes of a sample when nvar is 0
	coloff  []int // each column's offset in a sample when nvar is 0
	shards  []*shard
	chunks  []mlfeed.ChunkInfo
	chShard []int   // the shard of each chunk
	chFirst []int64 // the first sample (in its shard) of each chunk
	lengths [][]int64
	maxMem  int64
	mu      sync.Mutex // guards cache, cached
	cache   []*shard   // decompressed shards in memory, least recently used first
	cached  int64
	half    []string // float16 columns, read as float32
}

// shard is one shard file and, once loaded, its bytes.
type shard struct {
	i       int
	name    string // the path errors give
	path    string // the file read
	codec   *codec // nil: not compressed
	raw     int64  // bytes of the (decompressed) shard
	samples int64
	hashes  map[string]string // the digests of the file read, to check (VerifyHashes)

	mu     sync.Mutex
	data   []byte // the shard's bytes, nil until loaded (or after eviction)
	region *mmap.Region
	stride int // the size of every sample when all columns are fixed and the shard is mapped
}

// Open opens the MDS data set in dir (a directory with index.json, or that index.json).
func Open(dir string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if filepath.Base(dir) == IndexName {
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
	}
	ix, err := ReadIndex(dir)
	if err != nil {
		return nil, err
	}
	return newReader(dir, ix, &o)
}

func newReader(dir string, ix *Index, o *ReaderOptions) (*Reader, error) {
	rd := &Reader{dir: dir, index: ix, maxMem: o.MaxMemory}
	if rd.maxMem <= 0 {
		rd.maxMem = DefaultMaxMemory
	}
	if len(ix.Shards) == 0 {
		return rd, nil
	}
	s0 := &ix.Shards[0]
	for i, name := range s0.ColumnNames {
		c, err := parseColumn(name, s0.ColumnEncodings[i], o.PickleAsBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, IndexName), err)
		}
		if sz := s0.ColumnSizes[i]; (sz == nil) != (c.size == 0) || (sz != nil && *sz != int64(c.size)) {
			return nil, fmt.Errorf("%s: %w: column %q of encoding %q has size %s, not %d", filepath.Join(dir, IndexName), ErrFormat, name, c.enc, sizeText(sz), c.size)
		}
		if c.size == 0 {
			rd.nvar++
		}
		rd.cols = append(rd.cols, c)
	}
	names := map[string]bool{}
	for i := range rd.cols {
		for _, st := range rd.cols[i].streams() {
			if names[st.Name] {
				return nil, fmt.Errorf("%s: %w: two streams named %q (a column and an ndarray's shapes)", filepath.Join(dir, IndexName), ErrUnsupported, st.Name)
			}
			names[st.Name] = true
		}
	}
	if rd.nvar == 0 {
		for _, c := range rd.cols {
			rd.coloff = append(rd.coloff, rd.fixed)
			rd.fixed += c.size
		}
	}
	for i := range ix.Shards {
		si := &ix.Shards[i]
		sh := &shard{i: i, raw: si.RawData.Bytes, samples: si.Samples}
		sh.path = filepath.Join(dir, filepath.FromSlash(si.RawData.Basename))
		sh.name = sh.path
		if si.ZipData != nil {
			// Streaming keeps the raw file once it has decompressed a shard; read it then.
			if fi, err := os.Stat(sh.path); err != nil || fi.Size() != si.RawData.Bytes {
				c, _ := codecOf(*si.Compression) // checked by DecodeIndex
				sh.codec = &c
				sh.path = filepath.Join(dir, filepath.FromSlash(si.ZipData.Basename))
				sh.name = sh.path
			}
		}
		if o.VerifyHashes {
			sh.hashes = si.RawData.Hashes
			if sh.codec != nil {
				sh.hashes = si.ZipData.Hashes
			}
		}
		rd.shards = append(rd.shards, sh)
	}
	if err := rd.resolveTypes(); err != nil {
		rd.Close()
		return nil, err
	}
	for i := range rd.cols {
		c := &rd.cols[i]
		rd.first = append(rd.first, len(rd.schema.Streams))
		rd.schema.Streams = append(rd.schema.Streams, c.streams()...)
		if c.kind == kFloat16 || (c.esize == 2 && c.typ == mlfeed.Float32) {
			rd.half = append(rd.half, c.name)
		}
	}
	if err := rd.cut(o.ChunkSize); err != nil {
		rd.Close()
		return nil, err
	}
	return rd, nil
}

func sizeText(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// resolveTypes gives ndarray columns without a dtype the first sample's.
func (rd *Reader) resolveTypes() error {
	for c := range rd.cols {
		col := &rd.cols[c]
		if col.kind != kNDShape || col.dtype {
			continue
		}
		col.typ, col.esize = mlfeed.Uint8, 1 // an empty data set
		for _, sh := range rd.shards {
			if sh.samples == 0 {
				continue
			}
			data, err := rd.load(sh)
			if err != nil {
				return err
			}
			s, e := sampleAt(data, 0)
			pos := make([]int, len(rd.cols)+1)
			if err := rd.locate(data[s:e], pos); err != nil {
				return rd.sampleError(sh, 0, s, "", err)
			}
			v := data[s+pos[c] : s+pos[c+1]]
			if len(v) == 0 {
				return rd.sampleError(sh, 0, s+pos[c], col.name, fmt.Errorf("%w: an ndarray without its dtype", ErrTruncated))
			}
			name, ok := dtypeCodes[v[0]]
			if !ok {
				return rd.sampleError(sh, 0, s+pos[c], col.name, fmt.Errorf("%w: ndarray dtype code %d", ErrFormat, v[0]))
			}
			col.typ, col.esize = scalarTypes[name], scalarTypes[name].Size()
			if name == "float16" {
				col.esize = 2
			}
			break
		}
	}
	return nil
}

// hasLists reports whether a column gives a sample several (or no) samples of its stream.
func (rd *Reader) hasLists() bool {
	for _, c := range rd.cols {
		if c.kind == kList || c.kind == kArray {
			return true
		}
	}
	return false
}

// cut groups each shard's samples into chunks of about chunkSize bytes, from index.json's
// sample counts and sizes; with list columns it reads every sample's list lengths.
func (rd *Reader) cut(chunkSize int64) error {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	lists := rd.hasLists()
	if lists {
		rd.lengths = make([][]int64, len(rd.shards))
	}
	for _, sh := range rd.shards {
		if sh.samples == 0 {
			continue
		}
		per := sh.samples
		if avg := sh.raw / sh.samples; avg > 0 {
			per = max(1, chunkSize/avg)
		}
		var lens []int64
		if lists {
			var err error
			if lens, err = rd.listLengths(sh); err != nil {
				return err
			}
			rd.lengths[sh.i] = lens
		}
		for first := int64(0); first < sh.samples; first += per {
			n := min(per, sh.samples-first)
			samples := n
			if lists {
				samples = 0
				for _, l := range lens[first : first+n] {
					samples += l
				}
			}
			rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: samples})
			rd.chShard = append(rd.chShard, sh.i)
			rd.chFirst = append(rd.chFirst, first)
		}
	}
	return nil
}

// listLengths returns the length of every sample of sh as a sequence: the most samples any of
// its streams has (1 for every column but the lists).
func (rd *Reader) listLengths(sh *shard) ([]int64, error) {
	data, err := rd.load(sh)
	if err != nil {
		return nil, err
	}
	lens := make([]int64, sh.samples)
	pos := make([]int, len(rd.cols)+1)
	var base int64
	for _, c := range rd.cols {
		if c.kind != kList && c.kind != kArray {
			base = 1
		}
	}
	for k := range lens {
		s, e := sampleAt(data, k)
		if err := rd.locate(data[s:e], pos); err != nil {
			return nil, rd.sampleError(sh, int64(k), s, "", err)
		}
		l := base
		for c := range rd.cols {
			col := &rd.cols[c]
			if col.kind != kList && col.kind != kArray {
				continue
			}
			n, _, err := listHeader(data[s+pos[c]:s+pos[c+1]], col.kind)
			if err != nil {
				return nil, rd.sampleError(sh, int64(k), s+pos[c], col.name, err)
			}
			l = max(l, int64(n))
		}
		lens[k] = l
	}
	return lens, nil
}

// sampleAt returns where sample k lies in a checked shard.
func sampleAt(data []byte, k int) (start, end int) {
	o := 4 + 4*k
	return int(binary.LittleEndian.Uint32(data[o:])), int(binary.LittleEndian.Uint32(data[o+4:]))
}

// load returns the bytes of sh: mapped, or decompressed into memory (kept while the memory
// budget allows), its header checked.
func (rd *Reader) load(sh *shard) ([]byte, error) {
	data, fresh, err := rd.loadShard(sh)
	if fresh {
		rd.admit(sh, int64(len(data))) // holding no shard's lock: it takes others'
	}
	return data, err
}

// loadShard is load under sh's lock; fresh reports a shard just decompressed.
func (rd *Reader) loadShard(sh *shard) (_ []byte, fresh bool, _ error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.data != nil {
		if sh.codec != nil {
			rd.touch(sh)
		}
		return sh.data, false, nil
	}
	var data []byte
	if sh.codec == nil {
		f, size, err := mmap.OpenFile(sh.path)
		if err != nil {
			return nil, false, err
		}
		reg, err := mmap.Map(f, size)
		if err != nil {
			data = make([]byte, size)
			if _, err := f.ReadAt(data, 0); err != nil {
				f.Close()
				return nil, false, fmt.Errorf("%s: %w", sh.name, err)
			}
		} else {
			data = reg.Bytes()
		}
		f.Close()
		if err := mmap.Guard(func() error {
			if err := sh.verify(data); err != nil {
				return err
			}
			return rd.checkHeader(sh, data)
		}); err != nil {
			if reg != nil {
				reg.Close()
			}
			return nil, false, err
		}
		sh.region = reg
	} else {
		if sh.raw > rd.maxMem {
			return nil, false, mlfeed.OffsetError(sh.name, 0, "shard", fmt.Errorf("%w: the shard decompresses to %d bytes, over the memory budget of %d (--opt max_memory=BYTES)", ErrTooLarge, sh.raw, rd.maxMem))
		}
		src, err := readFile(sh.path, rd.maxMem)
		if err != nil {
			return nil, false, err
		}
		if err := sh.verify(src); err != nil {
			return nil, false, err
		}
		if data, err = sh.codec.decompress(src, sh.raw); err != nil {
			return nil, false, mlfeed.OffsetError(sh.name, 0, sh.codec.ext+" data", fmt.Errorf("%w: %v", ErrFormat, err))
		}
		if err := rd.checkHeader(sh, data); err != nil {
			return nil, false, err
		}
		fresh = true
	}
	sh.data = data
	return data, fresh, nil
}

// verify checks the file's bytes b against the first digest index.json gives for it by an
// algorithm mlfeed computes (none: nothing to check).
func (sh *shard) verify(b []byte) error {
	algos := make([]string, 0, len(sh.hashes))
	for a := range sh.hashes {
		if hashes[a] != nil {
			algos = append(algos, a)
		}
	}
	if len(algos) == 0 {
		return nil
	}
	sort.Strings(algos)
	if got := hexDigest(algos[0], b); got != sh.hashes[algos[0]] {
		return mlfeed.OffsetError(sh.name, 0, "file", fmt.Errorf("%w: %s digest %s, index.json says %s", ErrFormat, algos[0], got, sh.hashes[algos[0]]))
	}
	return nil
}

// readFile reads a compressed shard of at most limit bytes.
func readFile(name string, limit int64) ([]byte, error) {
	f, size, err := mmap.OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, mlfeed.OffsetError(name, 0, "shard", fmt.Errorf("%w: %d bytes, over the memory budget of %d (--opt max_memory=BYTES)", ErrTooLarge, size, limit))
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// admit counts a decompressed shard against the budget, evicting the least recently used.
// The caller holds no shard's lock.
func (rd *Reader) admit(sh *shard, n int64) {
	rd.mu.Lock()
	var evict []*shard
	for len(rd.cache) > 0 && rd.cached+n > rd.maxMem {
		old := rd.cache[0]
		rd.cache = rd.cache[1:]
		rd.cached -= old.raw
		evict = append(evict, old)
	}
	rd.cache = append(rd.cache, sh)
	rd.cached += n
	rd.mu.Unlock()
	for _, old := range evict {
		old.mu.Lock()
		old.data = nil // chunks that hold its strings keep the memory alive
		old.mu.Unlock()
	}
}

// touch marks sh as the most recently used.
func (rd *Reader) touch(sh *shard) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	for i, s := range rd.cache {
		if s == sh {
			copy(rd.cache[i:], rd.cache[i+1:])
			rd.cache[len(rd.cache)-1] = sh
			return
		}
	}
}

// checkHeader checks a shard's sample count and offsets.
func (rd *Reader) checkHeader(sh *shard, data []byte) error {
	field := "header"
	if sh.codec != nil {
		field = "header (decompressed offset)"
	}
	if len(data) < 4 {
		return mlfeed.OffsetError(sh.name, 0, field, fmt.Errorf("%w: the shard has %d bytes", ErrTruncated, len(data)))
	}
	n := int64(binary.LittleEndian.Uint32(data))
	if n != sh.samples {
		return mlfeed.OffsetError(sh.name, 0, field, fmt.Errorf("%w: the shard holds %d samples, index.json says %d", ErrFormat, n, sh.samples))
	}
	hdr := 4 + 4*(n+1)
	if int64(len(data)) < hdr {
		return mlfeed.OffsetError(sh.name, 4, field, fmt.Errorf("%w: the shard ends inside the offsets of its %d samples", ErrTruncated, n))
	}
	prev := hdr
	for k := int64(0); k <= n; k++ {
		o := int64(binary.LittleEndian.Uint32(data[4+4*k:]))
		if o < prev || o > int64(len(data)) {
			return mlfeed.OffsetError(sh.name, 4+4*k, field, fmt.Errorf("%w: sample offset %d after %d, in a shard of %d bytes", ErrFormat, o, prev, len(data)))
		}
		prev = o
	}
	if rd.nvar == 0 && sh.codec == nil {
		sh.stride = rd.fixed
		for k := 0; k < int(n); k++ {
			if s, e := sampleAt(data, k); e-s != rd.fixed {
				sh.stride = 0 // the decode reports the sample
				break
			}
		}
	}
	return nil
}

// sampleError names the shard, the byte offset and the sample (and column) of an error.
func (rd *Reader) sampleError(sh *shard, k int64, off int, col string, err error) error {
	field := fmt.Sprintf("sample %d", k)
	if col != "" {
		field += fmt.Sprintf(" column %q", col)
	}
	if sh.codec != nil {
		field += " (decompressed offset)"
	}
	return mlfeed.OffsetError(sh.name, int64(off), field, err)
}

// locate finds the columns of one sample: column c lies at [pos[c], pos[c+1]).
func (rd *Reader) locate(s []byte, pos []int) error {
	h := 4 * rd.nvar
	if len(s) < h {
		return fmt.Errorf("%w: the sample has %d bytes, less than its %d column sizes", ErrTruncated, len(s), rd.nvar)
	}
	off, v := h, 0
	for c := range rd.cols {
		sz := rd.cols[c].size
		if sz == 0 {
			sz = int(binary.LittleEndian.Uint32(s[4*v:]))
			v++
		}
		pos[c] = off
		off += sz
	}
	pos[len(rd.cols)] = off
	if off != len(s) {
		return fmt.Errorf("%w: the columns add up to %d bytes, the sample has %d", ErrFormat, off, len(s))
	}
	return nil
}

// Schema describes the streams: one per column, two for an ndarray of per-sample shapes.
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Index returns the data set's index.json.
func (rd *Reader) Index() *Index { return rd.index }

// SequenceLengths returns the length of every sequence (sample) of chunk i.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("mds: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	n := rd.chunks[i].Sequences
	if rd.lengths == nil {
		return mlfeed.Ones(n), nil
	}
	f := rd.chFirst[i]
	return append([]int64(nil), rd.lengths[rd.chShard[i]][f:f+int64(n)]...), nil
}

// ReadChunk decodes chunk i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// RawSamples reports where chunk i's values of a stream lie in a mapped shard whose samples
// all have the same size (every column of fixed size, no float16), for the minibatch engine
// to gather them without decoding (mlfeed.RawSampler).
func (rd *Reader) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if i < 0 || i >= len(rd.chunks) || rd.nvar != 0 || stream < 0 || stream >= len(rd.schema.Streams) {
		return nil, 0, 0, 0, false
	}
	c := sort.SearchInts(rd.first, stream+1) - 1
	col := &rd.cols[c]
	if (col.kind != kScalar && col.kind != kNDFixed) || col.esize != col.typ.Size() {
		return nil, 0, 0, 0, false
	}
	sh := rd.shards[rd.chShard[i]]
	if sh.codec != nil {
		return nil, 0, 0, 0, false
	}
	data, err := rd.load(sh)
	if err != nil || sh.stride == 0 || sh.region == nil {
		return nil, 0, 0, 0, false
	}
	s, _ := sampleAt(data, int(rd.chFirst[i]))
	return data, s + rd.coloff[c], sh.stride, 0, true
}

// Details reports the shards, the compression and the columns' encodings.
func (rd *Reader) Details() map[string]any {
	enc := map[string]string{}
	for _, c := range rd.cols {
		enc[c.name] = c.enc
	}
	var samples int64
	comp := map[string]bool{}
	for i, s := range rd.index.Shards {
		samples += s.Samples
		if s.Compression != nil && *s.Compression != "" && rd.shards[i].codec != nil {
			comp[*s.Compression] = true
		}
	}
	d := map[string]any{"shards": len(rd.shards), "samples": samples, "column_encodings": enc, "compression": "none"}
	if len(rd.half) > 0 {
		d["float16_read_as_float32"] = rd.half
	}
	for c := range comp {
		d["compression"] = c
	}
	return d
}

// Close unmaps the shards and drops the decompressed ones.
func (rd *Reader) Close() error {
	var first error
	for _, sh := range rd.shards {
		sh.mu.Lock()
		if sh.region != nil {
			if err := sh.region.Close(); err != nil && first == nil {
				first = err
			}
			sh.region = nil
		}
		sh.data = nil
		sh.mu.Unlock()
	}
	rd.mu.Lock()
	rd.cache, rd.cached = nil, 0
	rd.mu.Unlock()
	return first
}
