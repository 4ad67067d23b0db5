package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/atomicfile"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/shard"
	"github.com/mlfeed/mlfeed/storage"
)

// ShardOptions control a sharded conversion (see Shards). The zero value writes one shard
// with the format's default options.
type ShardOptions struct {
	// Options are the conversion's options. Format must be set (a directory has no
	// extension to tell it from).
	Options
	// Shards is the number of shards the whole data set is cut into, by sequences, as evenly
	// as the sequences allow. Zero means: one per input shard when the source is a
	// *shard.Source (the output shards then hold exactly the input shards' sequences), else
	// one per task.
	Shards int
	// ShardSize, when positive, cuts shards of about this many bytes of data (as held in
	// memory, which binary formats store nearly as is; compressed or text output differs),
	// instead of a fixed number of shards. It cannot be combined
	// with Shards or with several tasks.
	ShardSize int64
	// Task and Tasks split the conversion into Tasks independent tasks, of which this call
	// runs Task (0-based): it writes its share of the shards (a contiguous run) and a partial
	// manifest, shard.TaskManifestName(Task, Tasks); shard.Merge joins the partial manifests.
	// Tasks 0 or 1 means one task that writes every shard and the manifest.
	Task, Tasks int
}

// Shards converts src into the directory dir as shards part-NNNNN.EXT (each written
// atomically) and a manifest, shard.ManifestName, or a partial manifest when the work is
// split into tasks. The manifest is written last, so a reader never sees it before the
// shards it lists. It returns the manifest written.
func Shards(ctx context.Context, src mlfeed.Source, dir string, opts *ShardOptions) (_ *shard.Manifest, err error) {
	if opts == nil {
		opts = &ShardOptions{}
	}
	o := *opts
	if o.Format == nil {
		return nil, fmt.Errorf("%w: a sharded output needs its format named", format.ErrUsage)
	}
	if o.Tasks <= 0 {
		o.Tasks = 1
	}
	switch {
	case o.Task < 0 || o.Task >= o.Tasks:
		return nil, fmt.Errorf("%w: task %d of %d: want 0 <= task < tasks", format.ErrUsage, o.Task, o.Tasks)
	case o.ShardSize < 0 || o.Shards < 0:
		return nil, fmt.Errorf("%w: negative shard count or size", format.ErrUsage)
	case o.ShardSize > 0 && (o.Shards > 0 || o.Tasks > 1):
		return nil, fmt.Errorf("%w: a shard size cannot be combined with a shard count or with tasks", format.ErrUsage)
	}
	if o.Format.IsDir() {
		return nil, fmt.Errorf("%w: %s writes a directory of its own shards; convert to it without --shards or --shard-size", format.ErrUsage, o.Format.Name)
	}
	if !o.Format.Writable() {
		return nil, fmt.Errorf("%w: mlfeed reads %s but does not write it", format.ErrUsage, o.Format.Name)
	}
	if len(o.Streams) > 0 {
		sel, err := mlfeed.Select(src, o.Streams...)
		if err != nil {
			return nil, err
		}
		src = sel
		o.Streams = nil
	}
	schema, err := TargetSchema(src.Schema(), &o.Options)
	if err != nil {
		return nil, err
	}
	noteFlattened(dir, o.Format, schema, &o.Options)
	w := &shardWriter{src: src, dir: dir, opts: &o, in: src.Schema(), out: schema, ext: o.Format.Ext()}
	if storage.IsURL(dir) {
		// Each shard is written to a local staging directory, read back for its manifest
		// entry, then uploaded (appearing whole) and removed; the manifest goes up last.
		w.url = dir
		if w.dir, err = os.MkdirTemp("", "mlfeed-shards-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(w.dir)
	} else {
		_, statErr := os.Lstat(dir)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		if errors.Is(statErr, fs.ErrNotExist) && o.Tasks <= 1 {
			// A directory this conversion made goes again if it fails (a task's stays: the
			// job's other tasks write into it too).
			defer func() {
				if err != nil {
					os.RemoveAll(dir)
				}
			}()
		}
		if fi, err := os.Stat(dir); err != nil {
			return nil, err
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", format.ErrUsage, dir)
		}
	}
	w.starts = chunkStarts(src.Chunks())
	var entries []shard.Entry
	if o.ShardSize > 0 {
		entries, err = w.bySize(ctx)
	} else {
		entries, err = w.byCount(ctx)
	}
	if err != nil {
		return nil, err
	}
	return w.manifest(ctx, entries)
}

// shardWriter holds what writing the shards of one conversion shares.
type shardWriter struct {
	src    mlfeed.Source
	dir    string
	opts   *ShardOptions
	in     mlfeed.Schema // the source's schema
	out    mlfeed.Schema // the written schema (types, densified streams)
	ext    string        // the format's (format.Format.Ext), ending each shard's name
	starts []int64       // first sequence of each chunk, then the total
	url    string        // the output prefix in object storage, or empty (dir is then local staging)

	mu         sync.Mutex
	schemaRead *mlfeed.Schema // the schema of the first shard read back
}

func chunkStarts(infos []mlfeed.ChunkInfo) []int64 {
	s := make([]int64, len(infos)+1)
	for i, c := range infos {
		s[i+1] = s[i] + int64(c.Sequences)
	}
	return s
}

// bounds returns the first sequence of each of the k shards, then the total: the input
// shards' boundaries when the source is sharded into k, else an even split.
func (w *shardWriter) bounds(k int) []int64 {
	total := w.starts[len(w.starts)-1]
	if ss, ok := w.src.(*shard.Source); ok && len(ss.Shards()) == k {
		b := make([]int64, 0, k+1)
		for s := 0; s < k; s++ {
			b = append(b, w.starts[firstChunkOf(ss, s)])
		}
		return append(b, total)
	}
	b := make([]int64, k+1)
	for j := range b {
		b[j] = total * int64(j) / int64(k)
	}
	return b
}

// firstChunkOf returns the global index of shard s's first chunk.
func firstChunkOf(ss *shard.Source, s int) int {
	n := len(ss.Chunks())
	lo, hi := 0, n
	for lo < hi { // the first chunk whose shard is >= s
		mid := (lo + hi) / 2
		if k, _ := ss.Locate(mid); k < s {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// byCount writes this task's share of a fixed number of shards, several at once.
func (w *shardWriter) byCount(ctx context.Context) ([]shard.Entry, error) {
	o := w.opts
	k := o.Shards
	if k == 0 {
		if ss, ok := w.src.(*shard.Source); ok {
			k = len(ss.Shards())
		} else {
			k = o.Tasks
		}
	}
	total := w.starts[len(w.starts)-1]
	if int64(k) > total {
		return nil, fmt.Errorf("%w: %d shards of %d sequences: a shard would be empty", format.ErrUsage, k, total)
	}
	if o.Tasks > k {
		return nil, fmt.Errorf("%w: %d tasks for %d shards: a task would have nothing to do", format.ErrUsage, o.Tasks, k)
	}
	b := w.bounds(k)
	lo, hi := k*o.Task/o.Tasks, k*(o.Task+1)/o.Tasks // this task's shards
	entries := make([]shard.Entry, hi-lo)
	// Shards are written at once on the scheduler's threads (the one ctx carries, else one
	// of Options.Threads): the caller writes one, and each idle thread another.
	if sched.FromContext(ctx) == nil {
		ctx = sched.WithContext(ctx, sched.New(o.Threads, o.Memory))
	}
	err := sched.Parallel(ctx, hi-lo, func(ctx context.Context, i int) error {
		e, err := w.writeRange(ctx, lo+i, b[lo+i], b[lo+i+1])
		entries[i] = e
		return err
	})
	return entries, err
}

// bySize writes shards one after another, cutting each once it reaches the shard size.
func (w *shardWriter) bySize(ctx context.Context) ([]shard.Entry, error) {
	var entries []shard.Entry
	total := w.starts[len(w.starts)-1]
	for from := int64(0); from < total || len(entries) == 0; {
		e, to, err := w.write(ctx, len(entries), from, total, w.opts.ShardSize)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
		from = to
		if total == 0 {
			break
		}
	}
	return entries, nil
}

func (w *shardWriter) writeRange(ctx context.Context, j int, from, to int64) (shard.Entry, error) {
	e, _, err := w.write(ctx, j, from, to, 0)
	return e, err
}

// write writes sequences [from, to) as shard j, stopping early at a chunk boundary once the
// file reaches limit bytes (when limit > 0). It returns the shard's entry and where it
// stopped.
func (w *shardWriter) write(ctx context.Context, j int, from, to, limit int64) (_ shard.Entry, _ int64, err error) {
	name := shard.ShardName(j, w.ext)
	path := filepath.Join(w.dir, name)
	f, err := atomicfile.Create(path)
	if err != nil {
		return shard.Entry{}, 0, err
	}
	defer f.Abort()
	defer func() { err = f.Err(err) }() // errors name the shard, never its temporary file
	wo := w.opts.Write
	wo.Name = path
	wo.Context = ctx
	if limit == 0 {
		wo.Sequences = to - from
	}
	var out io.Writer = f.File
	var pieces *output
	if w.opts.Format.Streamable {
		out, pieces = streamed(f.File, w.opts.Format, w.out) // as a single output is written
	}
	sink, err := w.opts.Format.Create(out, w.out, &wo)
	if err != nil {
		return shard.Entry{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	pos := from
	var written int64 // bytes of data written
	for pos < to {
		if err := ctx.Err(); err != nil {
			return shard.Entry{}, 0, err
		}
		ci := searchStarts(w.starts, pos)
		c, err := w.src.ReadChunk(ctx, ci)
		if err != nil {
			return shard.Entry{}, 0, err
		}
		a, b := pos-w.starts[ci], min(to, w.starts[ci+1])-w.starts[ci]
		if a != 0 || b != int64(c.Sequences) {
			c = c.Slice(int(a), int(b))
		}
		if c, err = Transform(&w.in, &w.out, c); err != nil {
			return shard.Entry{}, 0, fmt.Errorf("%s: chunk %d: %w", path, ci, inDataSet(err, w.starts[ci]+a))
		}
		if limit > 0 { // take what fills the shard, judged by the chunk's bytes per sequence
			per := max(1, chunkBytes(c)/int64(c.Sequences))
			if n := max(1, (limit-written+per-1)/per); n < b-a {
				c = c.Slice(0, int(n))
				b = a + n
			}
		}
		if err := sink.WriteChunk(c); err != nil {
			return shard.Entry{}, 0, fmt.Errorf("%s: %w", path, err)
		}
		pos = w.starts[ci] + b
		if written += chunkBytes(c); limit > 0 && written >= limit {
			break
		}
	}
	err = sink.Close()
	if err == nil {
		err = pieces.Flush()
	}
	if err != nil {
		return shard.Entry{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return shard.Entry{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	e, err := w.describe(j, name)
	if err == nil && w.url != "" {
		if err = storage.Upload(ctx, path, storage.Join(w.url, name)); err == nil {
			err = os.Remove(path)
		}
	}
	return e, pos, err
}

// chunkBytes returns the bytes a chunk's values, indices and offsets take in memory.
func chunkBytes(c *mlfeed.Chunk) int64 {
	var n int64
	for i := range c.Streams {
		d := &c.Streams[i]
		n += int64(len(d.Values.Bytes)+4*len(d.Indices)+8*len(d.SampleStart)) + 8*int64(len(d.SeqStart))
		for _, s := range d.Values.Strings {
			n += int64(len(s))
		}
	}
	return n
}

// searchStarts returns the chunk holding sequence pos.
func searchStarts(starts []int64, pos int64) int {
	lo, hi := 0, len(starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= pos {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// describe reopens a written shard for its chunk table (as a reader will see it) and sums
// its bytes.
func (w *shardWriter) describe(j int, name string) (shard.Entry, error) {
	path := filepath.Join(w.dir, name)
	src, err := w.opts.Format.Open(path, &format.Options{})
	if err != nil {
		return shard.Entry{}, fmt.Errorf("reading back %w", err)
	}
	defer src.Close()
	e := shard.Entry{Path: name, Index: j, ChunkTable: shard.ChunkTable(src.Chunks())}
	e.Chunks = len(e.ChunkTable)
	e.Sequences, e.Samples = mlfeed.Totals(src.Chunks())
	w.mu.Lock()
	if w.schemaRead == nil {
		s := src.Schema()
		w.schemaRead = &s
	}
	w.mu.Unlock()
	e.Bytes, e.SHA256, err = shard.Checksum(path)
	return e, err
}

// manifest writes the manifest (or this task's partial manifest) listing entries.
func (w *shardWriter) manifest(ctx context.Context, entries []shard.Entry) (*shard.Manifest, error) {
	m := &shard.Manifest{Version: shard.Version, Format: w.opts.Format.Name, Shards: entries}
	if w.schemaRead == nil {
		return nil, errors.New("convert: no shard was written")
	}
	m.Schema = *w.schemaRead
	for _, e := range entries {
		m.Sequences += e.Sequences
		m.Samples += e.Samples
	}
	name := shard.ManifestName
	if w.opts.Tasks > 1 {
		m.Task = &shard.Task{Index: w.opts.Task, Count: w.opts.Tasks}
		name = shard.TaskManifestName(w.opts.Task, w.opts.Tasks)
	}
	if w.url != "" {
		b, err := m.Marshal()
		if err != nil {
			return nil, err
		}
		return m, storage.WriteFile(ctx, storage.Join(w.url, name), b)
	}
	return m, shard.WriteManifest(filepath.Join(w.dir, name), m)
}
