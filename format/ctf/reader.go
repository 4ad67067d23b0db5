package ctf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Reader reads a CTF file. It implements mlfeed.Source and mlfeed.Detailer.
type Reader struct {
	name   string
	opts   ReaderOptions
	schema mlfeed.Schema
	data   []byte
	region *mmap.Region
	layout layout
	chunks []chunkEntry
	// seqs, when the index kept them, holds each chunk's sequences as scanChunk finds them,
	// so that parsing does not scan for them again.
	seqs  [][]seqInfo
	infos []mlfeed.ChunkInfo
	// lazy is set when the file was cut into chunks without an index (see lazy.go): the
	// chunks' counts are made on the first call to Chunks, and parsing finds the sequences.
	lazy      bool
	countOnce sync.Once
	lazyIDs   *idFeed   // the id check of a lazy reader, fed as chunks are parsed
	rates     lazyRates // what the chunks parsed so far hold per byte (lazy reservations)
	sp        *spec
	double    bool

	fromCache string   // the index cache used, if any
	inferred  []string // inferred streams as NAME:STORAGE:DIM declarations
	// inferredDouble is set when the scan that inferred the streams found values that float32
	// cannot hold, and chose float64.
	inferredDouble bool

	closeMu sync.RWMutex
	closed  bool

	density []atomic.Int64 // per stream: values per MiB of text in the last chunk parsed
	lines   []atomic.Int64 // per chunk: its first line + 1, 0 while unknown
	counted []atomic.Bool  // per chunk: its errors were added to errs
	errs    atomic.Int64   // errors in distinct chunks so far (the maxErrors budget)
	// mapped, per chunk, is set while the pages the indexer mapped in (Populate) have not been
	// parsed yet: the first parse of each chunk need not map them in again.
	mapped []atomic.Bool

	kept keeper // KeepDataInMemory: every chunk parsed so far (keep.go)

	spare sync.Pool // *[]acc[T]: the buffers of pieces already joined, for later pieces

	// roundMu guards rounded, per stream the values float32 rounded in the chunks of
	// roundSeen (each chunk counted once, however often it is read), roundDone of them, and
	// roundLogged, set once the warnings were written to Log.
	roundMu     sync.Mutex
	rounded     []roundStat
	roundSeen   []bool
	roundDone   int
	roundLogged bool
}

// Open opens the named CTF file and builds its index. opts may be nil (the zero ReaderOptions).
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	opts = &o
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var region *mmap.Region
	var data []byte
	if st.Mode().IsRegular() {
		if region, err = mmap.Map(f, st.Size()); err == nil {
			data = region.Bytes()
		}
	}
	if region == nil {
		if data, err = io.ReadAll(f); err != nil {
			return nil, err
		}
	}
	var r *Reader
	err = mmap.Guard(func() (err error) { // the mapped file may shrink while it is indexed
		r, err = newReader(opts.FileName, data, region, opts)
		return err
	})
	if err != nil {
		if region != nil {
			region.Close()
		}
		return nil, err
	}
	return r, nil
}

// maxInMemory bounds the text NewReader reads into memory (Open maps files of any size).
const maxInMemory = 1 << 40

// NewReader reads the CTF text r holds, size bytes, into memory and builds its index; Open
// maps a file instead of reading it. opts.FileName names the data in messages (and is the
// index cache's base name with CacheIndex). opts may be nil (the zero ReaderOptions).
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	if size < 0 || size > maxInMemory || int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %w: %d bytes of CTF text to read into memory", opts.FileName, ErrTooLarge, size)
	}
	data := make([]byte, size)
	if n, err := r.ReadAt(data, 0); n < len(data) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%s: reading %d bytes of CTF text: %w", opts.FileName, size, err)
	}
	return newReader(opts.FileName, data, nil, opts)
}

// newReader reads CTF text held in memory; name is used in messages and for the index cache.
func newReader(name string, data []byte, region *mmap.Region, opts *ReaderOptions) (*Reader, error) {
	r := &Reader{name: name, opts: *opts, data: data, region: region}
	if err := r.init(); err != nil {
		return nil, err
	}
	return r, nil
}

// init checks the options, indexes the file and sets up the schema.
func (r *Reader) init() error {
	o := &r.opts
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	switch o.Precision {
	case mlfeed.Invalid, mlfeed.Float32:
	case mlfeed.Float64:
		r.double = true
	default:
		return fmt.Errorf("%w: ctf precision must be float32 or float64, not %s", format.ErrUsage, o.Precision)
	}
	streams, err := checkInputs(o.Inputs)
	if err != nil {
		return err
	}
	for _, s := range streams {
		r.double = r.double || s.Type == mlfeed.Float64
	}
	var main []byte
	for _, s := range streams {
		if s.DefinesMBSize {
			main = append([]byte{'|'}, s.FileName()...)
		}
	}
	if r.layout, err = detectLayout(r.data, o.SkipSequenceIDs); err != nil {
		return r.fileError(err)
	}
	if r.lazyApplies() {
		r.cutLazily()
	} else if err := r.index(main); err != nil {
		return r.fileError(err)
	}
	if streams == nil {
		if streams, err = r.infer(); err != nil {
			return err
		}
	}
	et := mlfeed.Float32
	if r.double {
		et = mlfeed.Float64
	}
	for i := range streams {
		streams[i].Type = et
	}
	r.schema = mlfeed.Schema{Streams: streams, HasIDs: r.layout.ids}
	r.sp = newSpec(r.name, streams, main, r.layout.ids, o)
	if !r.lazy {
		r.infos = make([]mlfeed.ChunkInfo, len(r.chunks))
		for i, c := range r.chunks {
			r.infos[i] = mlfeed.ChunkInfo{Sequences: c.sequences, Samples: c.samples}
		}
	}
	r.density = make([]atomic.Int64, len(streams))
	r.lines = make([]atomic.Int64, len(r.chunks))
	r.counted = make([]atomic.Bool, len(r.chunks))
	for i, c := range r.chunks {
		if c.line >= 0 {
			r.lines[i].Store(c.line + 1)
		}
	}
	return nil
}

// fileError names the file in an indexing error, and the line and column when it has an
// offset.
func (r *Reader) fileError(err error) error {
	var ao *atOffset
	if errors.As(err, &ao) && ao.off <= int64(len(r.data)) {
		head := r.data[:ao.off]
		line := bytes.Count(head, []byte{'\n'}) + 1
		col := len(head) - (bytes.LastIndexByte(head, '\n') + 1) + 1
		return mlfeed.LineError(r.name, line, col, ao.err)
	}
	return fmt.Errorf("%s: %w", r.name, err)
}

// maxDenseDim bounds a dense sample (1 GiB of float32): every sample, even an empty one, takes
// Dim values in memory.
const maxDenseDim = 1 << 28

// checkInputs validates declared streams as CNTK's config helper does.
func checkInputs(in []mlfeed.Stream) ([]mlfeed.Stream, error) {
	if in == nil {
		return nil, nil
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: ctf: no input declared", format.ErrUsage)
	}
	out := append([]mlfeed.Stream(nil), in...)
	aliases := map[string]string{}
	names := map[string]bool{}
	defining := 0
	for i := range out {
		s := &out[i]
		if s.Name == "" {
			return nil, fmt.Errorf("%w: ctf: input %d has no name", format.ErrUsage, i+1)
		}
		if names[s.Name] {
			return nil, fmt.Errorf("%w: ctf: input %q declared twice", format.ErrUsage, s.Name)
		}
		names[s.Name] = true
		al := s.FileName()
		if err := checkName(al); err != nil {
			return nil, fmt.Errorf("%w: ctf: input %q: %v", format.ErrUsage, s.Name, err)
		}
		if prev, ok := aliases[al]; ok {
			return nil, fmt.Errorf("%w: ctf: alias %s is already mapped to input %s", format.ErrUsage, al, prev)
		}
		aliases[al] = s.Name
		if s.Dim <= 0 {
			return nil, fmt.Errorf("%w: ctf: input %q needs a positive dimension", format.ErrUsage, s.Name)
		}
		if s.Storage == mlfeed.Dense && s.Dim > maxDenseDim {
			return nil, fmt.Errorf("%w: %w: ctf: dense input %q: dimension %d exceeds the limit of %d (2^28) values per sample", format.ErrUsage, mlfeed.ErrTooLarge, s.Name, s.Dim, maxDenseDim)
		}
		if s.Storage == mlfeed.Sparse && s.Dim > 1<<31-1 {
			return nil, fmt.Errorf("%w: ctf: sparse input %q: dimension %d exceeds the limit of %d (2^31-1)", format.ErrUsage, s.Name, s.Dim, 1<<31-1)
		}
		switch s.Type {
		case mlfeed.Invalid, mlfeed.Float32, mlfeed.Float64:
		default:
			return nil, fmt.Errorf("%w: ctf: input %q: CTF values are float32 or float64, not %s", format.ErrUsage, s.Name, s.Type)
		}
		if s.DefinesMBSize {
			defining++
		}
		s.Shape = nil
	}
	if defining > 1 {
		return nil, fmt.Errorf("%w: ctf: only a single stream is allowed to define the minibatch size, but %d found", format.ErrUsage, defining)
	}
	return out, nil
}

// checkName reports whether s can be an input name in a CTF file.
func checkName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if s[0] == '#' {
		return fmt.Errorf("name %q starts with '#', which makes it a comment", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7F || c == '|' {
			return fmt.Errorf("name %q holds %q; names are printable ASCII without spaces or '|'", s, c)
		}
	}
	return nil
}

func newSpec(name string, streams []mlfeed.Stream, main []byte, ids bool, o *ReaderOptions) *spec {
	sp := &spec{file: name, path: name, main: main, ids: ids, trace: o.TraceLevel, log: o.Log, logMu: new(sync.Mutex)}
	switch {
	case o.Precision == mlfeed.Float64:
		sp.prec = precDouble
	case o.Exact:
		sp.prec = precExact
	case o.Precision == mlfeed.Float32:
		sp.prec = precFloat
	}
	for _, s := range streams {
		sp.names = append(sp.names, s.Name)
		sp.aliases = append(sp.aliases, []byte(s.FileName()))
		sp.dense = append(sp.dense, s.Storage == mlfeed.Dense)
		sp.dims = append(sp.dims, s.Dim)
		sp.defines = append(sp.defines, main == nil || s.DefinesMBSize)
		sp.maxAlias = max(sp.maxAlias, len(s.FileName()))
	}
	return sp
}

// index builds the chunk table, from the index cache when allowed and fresh.
func (r *Reader) index(main []byte) error {
	o := &r.opts
	var cache string
	if o.CacheIndex {
		cache = cacheName(r.name, main, o.SkipSequenceIDs)
		if chunks, ok := loadCache(cache, r.name, r.data, r.layout, o.ChunkSize, o.FrameMode, main != nil); ok {
			r.chunks, r.fromCache = chunks, cache
			return nil
		}
	}
	var rec *cacheWriter
	if cache != "" {
		rec = newCacheWriter(cache)
	}
	// Ids used by separate sequences are worth a warning (CNTK reads them silently as
	// separate sequences); collect them when the warning can be seen.
	var ids *idCheck
	if r.layout.ids && o.Log != nil && o.TraceLevel >= levelWarning {
		ids = &idCheck{}
	}
	// The sequences are kept while they fit what the index may hold.
	keep := &seqKeeper{limit: indexHold(r.layout.size, o.Context) / int64(unsafe.Sizeof(seqInfo{}))}
	// What else sees every sequence: the index cache and the id check, when there.
	var record func(q seqInfo)
	if rec != nil || ids != nil {
		record = func(q seqInfo) {
			if rec != nil {
				rec.add(q)
			}
			if ids != nil {
				ids.add(q.key)
			}
		}
	}
	var populate func(off, end int64)
	if r.region != nil && mmap.CanPopulate {
		populate = r.region.Populate
	}
	chunks, err := r.indexParallel(main, record, populate, keep)
	if chunks == nil && err == nil {
		chunks, err = buildIndex(r.data, r.layout, main, o.ChunkSize, o.FrameMode, func(q seqInfo) {
			keep.add(q)
			if record != nil {
				record(q)
			}
		}, populate)
	}
	if err != nil {
		rec.abort()
		return err
	}
	if ids != nil {
		ids.warn(o.Log, r.name)
	}
	rec.commit()
	r.chunks = chunks
	r.seqs = keep.split(chunks, r.layout.dataLine)
	if populate != nil {
		r.mapped = make([]atomic.Bool, len(chunks))
		for i := range r.mapped {
			r.mapped[i].Store(true)
		}
	}
	return nil
}

// seqKeeper keeps the sequences the indexer finds, up to limit of them.
type seqKeeper struct {
	limit int64
	all   []seqInfo
	over  bool
}

// take returns room for n more sequences, to be filled in order, or nil when they do not fit
// the limit (and then keeps none).
func (k *seqKeeper) take(n int) []seqInfo {
	if k.over || int64(len(k.all)+n) > k.limit {
		k.over, k.all = true, nil
		return nil
	}
	k.all = slices.Grow(k.all, n)[:len(k.all)+n]
	return k.all[len(k.all)-n:]
}

func (k *seqKeeper) add(q seqInfo) {
	if k.over {
		return
	}
	if int64(len(k.all)) >= k.limit {
		k.over, k.all = true, nil
		return
	}
	k.all = append(k.all, q)
}

// split returns the kept sequences of each chunk, their lines counted from the chunk's first
// (the indexer counts them from dataLine), or nil when they were not all kept.
func (k *seqKeeper) split(chunks []chunkEntry, dataLine int64) [][]seqInfo {
	if k.over {
		return nil
	}
	out := make([][]seqInfo, len(chunks))
	all := k.all
	for i, c := range chunks {
		if c.sequences > len(all) {
			return nil
		}
		out[i], all = all[:c.sequences:c.sequences], all[c.sequences:]
		for j := range out[i] {
			out[i][j].line += dataLine - c.line
		}
	}
	if len(all) != 0 {
		return nil
	}
	return out
}

// maxIDCheck bounds the memory idCheck keeps, in bytes.
const maxIDCheck = 8 << 20

// idCheck finds sequence ids that start more than one sequence in bounded memory. Sequences
// whose ids only increase cannot repeat one: while they do, it keeps only runs of consecutive
// ids (one run for the common ids 0, 1, 2, ...), and it collects the ids that follow the first
// decrease. Past maxIDCheck bytes it stops collecting and checks the ids it has.
type idCheck struct {
	runs       [][2]uint64 // the increasing prefix, as runs first..last of consecutive ids
	keys       []uint64    // every id after the prefix
	full       bool        // the memory bound was reached
	pastPrefix bool        // an id no greater than the one before came
}

// size is the memory the ids kept take, in bytes (appending may reserve up to twice that).
func (c *idCheck) size() int { return 16*len(c.runs) + 8*len(c.keys) }

func (c *idCheck) add(key uint64) {
	if c.full {
		return
	}
	if !c.pastPrefix {
		n := len(c.runs)
		if n > 0 && c.runs[n-1][1] < key && key-c.runs[n-1][1] == 1 {
			c.runs[n-1][1] = key
			return
		}
		if n > 0 && key <= c.runs[n-1][1] {
			c.pastPrefix = true
		} else if c.size()+16 > maxIDCheck {
			c.full = true
			return
		} else {
			c.runs = append(c.runs, [2]uint64{key, key})
			return
		}
	}
	if c.size()+8 > maxIDCheck {
		c.full = true
		return
	}
	c.keys = append(c.keys, key)
}

// inPrefix reports whether key is one of the increasing prefix's ids.
func (c *idCheck) inPrefix(key uint64) bool {
	i, _ := slices.BinarySearchFunc(c.runs, key, func(r [2]uint64, k uint64) int {
		if r[1] < k {
			return -1
		}
		if r[0] > k {
			return 1
		}
		return 0
	})
	return i < len(c.runs) && c.runs[i][0] <= key && key <= c.runs[i][1]
}

// warn logs the ids that start more than one sequence.
func (c *idCheck) warn(log io.Writer, name string) {
	keys := c.keys
	slices.Sort(keys)
	shown := 0
	for k := 0; k < len(keys); {
		j := k + 1
		for j < len(keys) && keys[j] == keys[k] {
			j++
		}
		n := j - k
		if c.inPrefix(keys[k]) {
			n++
		}
		if n > 1 {
			if shown < 10 {
				fmt.Fprintf(log, "WARNING: sequence id %d starts %d separate sequences in the input file (%s); they are read as separate sequences, as CNTK does (mlfeed validate lists their lines).\n", keys[k], n, name)
			}
			shown++
		}
		k = j
	}
	if shown > 10 {
		fmt.Fprintf(log, "WARNING: %d more sequence ids start several sequences in the input file (%s).\n", shown-10, name)
	}
}

// Schema returns the streams, in declaration (or first appearance) order.
func (r *Reader) Schema() mlfeed.Schema { return r.schema }

// Chunks returns the chunk table. Samples follow CNTK's index: lines spanned per sequence, or
// lines mentioning the definesMBSize stream. A reader opened for a sequential read
// (ReaderOptions.Sequential) of a large file with sequence ids has no index: its first call
// to Chunks scans the file to count (NumChunks does not).
func (r *Reader) Chunks() []mlfeed.ChunkInfo {
	if r.lazy {
		r.countOnce.Do(r.countLazily)
	}
	return r.infos
}

// NumChunks returns the number of chunks, len(Chunks()), without the scan that a reader
// opened for a sequential read makes on the first call to Chunks.
func (r *Reader) NumChunks() int { return len(r.chunks) }

// SequenceInfo describes one sequence as the index sees it.
type SequenceInfo struct {
	// Key is the sequence id, or in a file without ids the 0-based line number.
	Key uint64
	// Samples is CNTK's index sample count of the sequence.
	Samples int64
	// Offset and Size give the sequence's bytes in the file.
	Offset, Size int64
}

// Sequences returns the sequences of chunk i as the index sees them, without parsing values:
// the keys and sample counts CNTK's randomizer and packers work with.
func (r *Reader) Sequences(i int) ([]SequenceInfo, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("ctf: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.closeMu.RUnlock()
	out := make([]SequenceInfo, 0, r.chunks[i].sequences)
	err := r.scanChunk(i, func(q seqInfo) bool {
		out = append(out, SequenceInfo{Key: q.key, Samples: q.samples, Offset: q.start, Size: q.end - q.start})
		return true
	})
	return out, err
}

// SequenceLengths returns the index sample count of every sequence of chunk i (see
// Sequences), without parsing values. It lets the minibatch package walk and pack sequences
// without decoding chunks (Source.SequenceLengths).
func (r *Reader) SequenceLengths(i int) ([]int64, error) {
	seqs, err := r.Sequences(i)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(seqs))
	for k, s := range seqs {
		out[k] = s.Samples
	}
	return out, nil
}

// scanChunk walks the sequences of chunk i.
func (r *Reader) scanChunk(i int, yield func(seqInfo) bool) error {
	if r.seqs != nil {
		for _, q := range r.seqs[i] {
			if !yield(q) {
				break
			}
		}
		return nil
	}
	c := r.chunks[i]
	s := scanner{data: r.data, from: c.start, to: c.end, atEOF: c.end == r.layout.size,
		ids: r.layout.ids, main: r.sp.main, firstLine: c.line}
	return s.each(yield)
}

// chunkLine returns the 0-based line number where chunk i starts, counting when unknown.
func (r *Reader) chunkLine(i int) int64 {
	if v := r.lines[i].Load(); v > 0 {
		return v - 1
	}
	n := int64(bytes.Count(r.data[:r.chunks[i].start], []byte{'\n'}))
	r.lines[i].Store(n + 1)
	return n
}

func (r *Reader) acquire() error {
	r.closeMu.RLock()
	if r.closed {
		r.closeMu.RUnlock()
		return fmt.Errorf("ctf: %s: read after Close", r.name)
	}
	return nil
}

// ReadChunk parses chunk i on the calling goroutine. It is safe for concurrent use. A chunk
// of at least 1 MiB is parsed in as many pieces as sched.Pieces says, on the threads of the
// scheduler ctx carries (internal/sched; none: on the caller alone); cancelling ctx stops the
// parse between pieces.
func (r *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	ctx, err := r.checkRead(ctx, i)
	if err != nil {
		return nil, err
	}
	if r.opts.KeepDataInMemory {
		return r.keptChunk(ctx, i)
	}
	return r.parse(ctx, i, nil)
}

// ReadChunkReuse reads chunk i as ReadChunk does, into the memory of prev (a chunk an earlier
// call returned, which the caller no longer uses) where it is large enough. With
// KeepDataInMemory, prev is not reused: the reader keeps its chunks.
func (r *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if r.opts.KeepDataInMemory || prev == nil {
		return r.ReadChunk(ctx, i)
	}
	ctx, err := r.checkRead(ctx, i)
	if err != nil {
		return nil, err
	}
	return r.parse(ctx, i, prev)
}

// checkRead checks a read of chunk i with ctx (nil: context.Background(), which it returns).
func (r *Reader) checkRead(ctx context.Context, i int) (context.Context, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("ctf: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return ctx, ctx.Err()
}

// parse parses chunk i, into prev's memory when prev is not nil, in pieces on the
// scheduler's threads when it is large and sched.Pieces says threads will take them.
func (r *Reader) parse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.closeMu.RUnlock()
	var c *mlfeed.Chunk
	var errs int
	var cause *diag
	var err error
	if r.mapped == nil || !r.mapped[i].Swap(false) {
		r.region.Populate(r.chunks[i].start, r.chunks[i].end)
	}
	pieces := sched.Pieces(ctx)
	if r.double {
		c, errs, cause, err = parsePieces(ctx, r, i, pieces, minSplit, memOf[float64](prev, len(r.schema.Streams)))
	} else {
		c, errs, cause, err = parsePieces(ctx, r, i, pieces, minSplit, memOf[float32](prev, len(r.schema.Streams)))
	}
	if err != nil {
		return nil, err
	}
	if r.opts.Sequential {
		r.region.Unmap(r.chunks[i].start, r.chunks[i].end)
	}
	if n := r.chunks[i].end - r.chunks[i].start; n > 0 {
		for s, d := range c.Streams {
			if !r.sp.dense[s] {
				r.density[s].Store(int64(d.Values.Len())<<20/n + 1)
			}
		}
	}
	if errs > 0 && !r.counted[i].Swap(true) {
		if total := r.errs.Add(int64(errs)); total > int64(r.opts.MaxErrors) {
			e := fmt.Errorf("%w: %s; %d errors in the file so far, more than maxErrors=%d allows (CNTK: Reached the maximum number of allowed errors while reading the input file (%s).)", ErrFormat, cause.text(), total, r.opts.MaxErrors, r.name)
			return nil, r.fileError(&atOffset{cause.at(), e})
		}
	}
	return c, nil
}

// parseChunk parses chunk i with element type T. strict, if set, makes it a validation pass.
// It returns the chunk, the errors it counted and the cause of the last one.
// Cancelling ctx stops it within cancelCheck sequences.
func parseChunk[T float32 | float64](ctx context.Context, r *Reader, i int, strict func(error) bool) (c *mlfeed.Chunk, errs int, cause *diag, err error) {
	return parseChunkInto[T](ctx, r, i, strict, nil)
}

// parseChunkInto is parseChunk into the buffers of mem where they are large enough.
func parseChunkInto[T float32 | float64](ctx context.Context, r *Reader, i int, strict func(error) bool, mem []acc[T]) (c *mlfeed.Chunk, errs int, cause *diag, err error) {
	p := newParser[T](r.sp, r.data, r.opts.MaxErrors, func() int64 { return r.chunkLine(i) })
	p.strict = strict
	if strict != nil {
		p.check = true
	}
	ce := r.chunks[i]
	if r.lazy {
		ce = r.rates.estimate(ce)
	}
	p.reserve(ce, r.density, mem)
	var ids idList
	if r.layout.ids && strict == nil {
		ids.reserve(ce.sequences)
	}
	var keys []uint64 // for the id check of a lazy reader
	feed := r.lazyIDs != nil && strict == nil
	defer func() {
		if v := recover(); v != nil {
			a, ok := v.(abort)
			if !ok {
				panic(v)
			}
			c, err = nil, a.err
		}
	}()
	n := 0
	var samples int64
	keepIDs := r.layout.ids && strict == nil
	var cerr error
	serr := r.scanChunk(i, func(q seqInfo) bool {
		if r.lazy {
			// The checks the index makes at opening, made as the sequences are found.
			if serr := checkSequence(q, r.opts.FrameMode); serr != nil {
				cerr = r.fileError(serr)
				return false
			}
			if feed {
				keys = append(keys, q.key)
			}
			samples += q.samples
		}
		p.sequence(q)
		if keepIDs {
			ids.add(q.key)
		}
		n++
		if n%cancelCheck == 0 {
			cerr = ctx.Err()
		}
		return cerr == nil
	})
	if cerr != nil {
		return nil, p.errors, nil, cerr
	}
	if serr != nil {
		return nil, p.errors, nil, r.fileError(serr)
	}
	r.noteRounded(i, p.rounded)
	if r.lazy && strict == nil {
		r.rates.note(ce.end-ce.start, n, samples)
		if feed {
			r.lazyIDs.add(i, keys)
		}
	}
	return p.chunk(n, ids.strings()), p.errors, &p.lastFail, nil
}

// cancelCheck is how many sequences parseChunk parses between looks at its context.
const cancelCheck = 4096

// idList collects sequence ids as decimal text in one buffer, to make one string allocation
// per chunk rather than one per sequence.
type idList struct {
	text []byte
	ends []int
}

// reserve makes room for n ids of up to seven digits.
func (l *idList) reserve(n int) {
	l.text = make([]byte, 0, 7*n)
	l.ends = make([]int, 0, n)
}

func (l *idList) add(key uint64) {
	l.text = strconv.AppendUint(l.text, key, 10)
	l.ends = append(l.ends, len(l.text))
}

// strings returns the ids, or nil when none were added.
func (l *idList) strings() []string {
	if l.ends == nil {
		return nil
	}
	all := string(l.text)
	out := make([]string, len(l.ends))
	start := 0
	for k, e := range l.ends {
		out[k] = all[start:e]
		start = e
	}
	return out
}

// ReadChunks parses every chunk and calls fn with each, in order. With a scheduler in ctx
// (internal/sched) the chunks after the current one are parsed ahead on its idle threads;
// without one, each in turn on the caller's goroutine. It stops at the first error, from
// parsing or from fn.
func (r *Reader) ReadChunks(ctx context.Context, fn func(i int, c *mlfeed.Chunk) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s := sched.FromContext(ctx)
	if s == nil || s.Threads() == 1 {
		for i := range r.chunks {
			c, err := r.ReadChunk(ctx, i)
			if err != nil {
				return err
			}
			if err := fn(i, c); err != nil {
				return err
			}
		}
		return nil
	}
	order := make([]int, len(r.chunks))
	for i := range order {
		order[i] = i
	}
	ra := s.ReadAhead(ctx, r, order, nil)
	defer ra.Close()
	for ra.Next() {
		if err := fn(ra.Index(), ra.Chunk()); err != nil {
			return err
		}
	}
	return ra.Err()
}

// Details reports the file mode, precision, options and, when the streams were inferred, the
// declarations that reproduce them.
func (r *Reader) Details() map[string]any {
	mode := "lines (one sequence per line)"
	if r.layout.ids {
		mode = "ids (lines grouped by sequence id)"
	}
	prec := "float"
	if r.double {
		prec = "double"
	}
	d := map[string]any{
		"mode":       mode,
		"precision":  prec,
		"chunk_size": r.opts.ChunkSize,
		"max_errors": r.opts.MaxErrors,
	}
	if r.inferred != nil {
		d["inferred_inputs"] = r.inferred
	}
	if r.inferredDouble {
		d["precision"] = "double (inferred: values float32 cannot hold)"
	}
	if r.fromCache != "" {
		d["index_cache"] = r.fromCache
	}
	for _, s := range r.schema.Streams {
		if s.DefinesMBSize {
			d["defines_mb_size"] = s.Name
		}
	}
	return d
}

// noteRounded adds the values float32 rounded in chunk i (per stream, from the parses of its
// pieces; nil for none) to the counts, once per chunk. Once every chunk is counted, the
// counts are final and the warnings go to Log.
func (r *Reader) noteRounded(i int, parts ...[]roundStat) {
	r.roundMu.Lock()
	defer r.roundMu.Unlock()
	if r.roundSeen == nil {
		r.roundSeen = make([]bool, len(r.chunks))
		r.rounded = make([]roundStat, len(r.schema.Streams))
	}
	if r.roundSeen[i] {
		return
	}
	r.roundSeen[i] = true
	r.roundDone++
	defer func() {
		if r.roundDone == len(r.chunks) {
			r.logRounded()
		}
	}()
	for _, st := range parts {
		for s, x := range st {
			t := &r.rounded[s]
			if x.n == 0 {
				continue
			}
			if t.n == 0 || x.off < t.off {
				t.off, t.tok = x.off, x.tok
				t.line, t.col = r.lineColIn(i, x.off)
			}
			t.n += x.n
		}
	}
}

// lineColIn returns the 1-based line and column of offset off in chunk i.
func (r *Reader) lineColIn(i int, off int64) (int, int) {
	start := r.chunks[i].start
	text := r.data[start:off]
	line := r.chunkLine(i) + int64(bytes.Count(text, []byte{'\n'})) + 1
	return int(line), int(off - (start + int64(bytes.LastIndexByte(text, '\n')+1)) + 1)
}

// Rounded returns, per stream, how many values float32 rounded in the chunks read so far, and
// where the first was, each as a format.Warning wrapping ErrRounded (a mlfeed.PosError at the
// first value's line and column); nil when none was. Values are rounded only when no precision
// was chosen (ReaderOptions.Precision Invalid, Exact false). The same goes to Log, once: when
// every chunk has been read, or else at Close.
func (r *Reader) Rounded() []error {
	r.roundMu.Lock()
	defer r.roundMu.Unlock()
	return r.roundedLocked()
}

// logRounded writes the rounding warnings to Log, once. roundMu is held.
func (r *Reader) logRounded() {
	if r.roundLogged || r.opts.Log == nil {
		return
	}
	r.roundLogged = true
	for _, w := range r.roundedLocked() {
		r.sp.logMu.Lock()
		fmt.Fprintf(r.opts.Log, "WARNING: %v\n", errors.Unwrap(w))
		r.sp.logMu.Unlock()
	}
}

func (r *Reader) roundedLocked() []error {
	var out []error
	for s, t := range r.rounded {
		if t.n == 0 {
			continue
		}
		v, _ := strconv.ParseFloat(t.tok, 64)
		values := "values"
		if t.n == 1 {
			values = "value"
		}
		msg := fmt.Sprintf("ctf: precision: %d %s of input %q rounded to float32, the first here (%s reads as %s); --opt precision=double keeps them as written", t.n, values, r.schema.Streams[s].Name, t.tok, fmt32(float32(v)))
		out = append(out, format.Warning(mlfeed.LineError(r.name, t.line, t.col, &valueError{msg: msg, kind: ErrRounded})))
	}
	return out
}

// Close writes the rounding warnings (Rounded) to Log unless reading every chunk did, and
// unmaps the file. It waits for parses in progress.
func (r *Reader) Close() error {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.roundMu.Lock()
	r.logRounded()
	r.roundMu.Unlock()
	if r.region != nil {
		return r.region.Close()
	}
	return nil
}
