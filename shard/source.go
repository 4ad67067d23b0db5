package shard

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"weak"

	"github.com/mlfeed/mlfeed"
)

// Opener opens one shard as a source.
type Opener func(name string) (mlfeed.Source, error)

// Source is a data set of many shards read as one: its chunk table is the shards' chunk
// tables one after the other, and chunk i is read from the shard that holds it. Shards are
// opened when a chunk of theirs is first read (all of them at once, to learn their chunk
// tables, when there is no manifest). It is safe for concurrent use.
type Source struct {
	paths  []string
	open   Opener
	m      *Manifest
	schema mlfeed.Schema
	infos  []mlfeed.ChunkInfo
	first  []int // global index of each shard's first chunk, then the total
	shards []shardState

	reuseMu sync.Mutex
	// owner records the shard that decoded each chunk ReadChunkReuse handed out. Its keys are
	// weak: a chunk the caller drops must not stay reachable through it (strong keys kept every
	// chunk of a randomized sweep alive, the whole data set in memory).
	owner map[weak.Pointer[mlfeed.Chunk]]int
}

type shardState struct {
	mu  sync.Mutex
	src mlfeed.Source
	err error
}

// NewSource returns the shards at paths, in that order, as one source. m is their manifest,
// or nil: without one, every shard is opened now to learn its schema and chunk table, and
// the shards must agree on their streams (the error names the first that does not); with
// one, the schema and chunk table come from it, and a shard is opened (and checked against
// its entry) only when a chunk of it is read.
func NewSource(paths []string, m *Manifest, open Opener) (*Source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no shards", ErrManifest)
	}
	s := &Source{paths: paths, open: open, m: m, shards: make([]shardState, len(paths))}
	s.first = make([]int, 0, len(paths)+1)
	if m != nil {
		if len(m.Shards) != len(paths) {
			return nil, fmt.Errorf("%w: %d paths for %d manifest entries", ErrManifest, len(paths), len(m.Shards))
		}
		s.schema = m.Schema
		for i := range m.Shards {
			s.first = append(s.first, len(s.infos))
			s.infos = append(s.infos, m.Shards[i].Infos()...)
		}
		s.first = append(s.first, len(s.infos))
		return s, nil
	}
	for i, p := range paths {
		src, err := open(p)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.shards[i].src = src
		if i == 0 {
			s.schema = src.Schema()
		} else if err := sameStreams(paths[0], s.schema, p, src.Schema()); err != nil {
			s.Close()
			return nil, err
		}
		s.first = append(s.first, len(s.infos))
		s.infos = append(s.infos, src.Chunks()...)
	}
	s.first = append(s.first, len(s.infos))
	return s, nil
}

// sameStreams returns an error naming shard b and what in its schema differs from shard a's.
func sameStreams(a string, sa mlfeed.Schema, b string, sb mlfeed.Schema) error {
	if SameSchema(sa, sb) {
		return nil
	}
	why := "the streams' metadata differ"
	switch {
	case len(sa.Streams) != len(sb.Streams):
		why = fmt.Sprintf("%d streams, %s has %d", len(sb.Streams), a, len(sa.Streams))
	case sa.HasIDs != sb.HasIDs:
		why = "sequence ids differ"
	default:
		for i := range sa.Streams {
			if x, y := sa.Streams[i], sb.Streams[i]; x.String() != y.String() {
				why = fmt.Sprintf("stream %d is %q, in %s %q", i+1, y.String(), a, x.String())
				break
			}
		}
	}
	return fmt.Errorf("%s: %w: its streams do not match the data set's: %s", b, ErrManifest, why)
}

// Schema returns the data set's schema.
func (s *Source) Schema() mlfeed.Schema { return s.schema }

// Chunks returns the global chunk table.
func (s *Source) Chunks() []mlfeed.ChunkInfo { return s.infos }

// Shards returns the shards' paths.
func (s *Source) Shards() []string { return s.paths }

// Locate returns the shard that holds global chunk i and the chunk's index in that shard.
func (s *Source) Locate(i int) (shard, local int) {
	k := sort.SearchInts(s.first, i+1) - 1
	return k, i - s.first[k]
}

// shard returns shard k's source, opening it if needed.
func (s *Source) shard(k int) (mlfeed.Source, error) {
	st := &s.shards[k]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.src != nil || st.err != nil {
		return st.src, st.err
	}
	src, err := s.open(s.paths[k])
	if err == nil && s.m != nil {
		err = s.checkEntry(k, src)
		if err != nil {
			src.Close()
		}
	}
	if err != nil {
		st.err = err
		return nil, err
	}
	st.src = src
	return src, nil
}

// checkEntry checks an opened shard against its manifest entry.
func (s *Source) checkEntry(k int, src mlfeed.Source) error {
	p := s.paths[k]
	if err := sameStreams("the manifest", s.schema, p, src.Schema()); err != nil {
		return err
	}
	want := s.m.Shards[k].ChunkTable
	got := ChunkTable(src.Chunks())
	if len(got) != len(want) {
		return fmt.Errorf("%s: %w: %d chunks, the manifest says %d", p, ErrManifest, len(got), len(want))
	}
	for j := range got {
		if got[j] != want[j] {
			return fmt.Errorf("%s: %w: chunk %d holds %d sequences and %d samples, the manifest says %d and %d", p, ErrManifest, j, got[j][0], got[j][1], want[j][0], want[j][1])
		}
	}
	return nil
}

func (s *Source) checkIndex(i int) error {
	if i < 0 || i >= len(s.infos) {
		return fmt.Errorf("shard: chunk %d out of range [0, %d)", i, len(s.infos))
	}
	return nil
}

// ReadChunk decodes global chunk i from its shard.
func (s *Source) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if err := s.checkIndex(i); err != nil {
		return nil, err
	}
	k, local := s.Locate(i)
	src, err := s.shard(k)
	if err != nil {
		return nil, err
	}
	return src.ReadChunk(ctx, local)
}

// ReadChunkReuse decodes global chunk i into the memory of prev when prev came from the same
// shard (the shard's source decides whether it can use it).
func (s *Source) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if err := s.checkIndex(i); err != nil {
		return nil, err
	}
	k, local := s.Locate(i)
	src, err := s.shard(k)
	if err != nil {
		return nil, err
	}
	s.reuseMu.Lock()
	if prev != nil {
		key := weak.Make(prev)
		owner, ok := s.owner[key]
		delete(s.owner, key)
		if !ok || owner != k {
			prev = nil // another shard's memory (possibly its read-only mapping)
		}
	}
	s.reuseMu.Unlock()
	c, err := src.ReadChunkReuse(ctx, local, prev)
	if err == nil {
		s.reuseMu.Lock()
		if s.owner == nil || len(s.owner) > 4096 { // forget the keys of chunks the caller dropped
			s.owner = map[weak.Pointer[mlfeed.Chunk]]int{}
		}
		s.owner[weak.Make(c)] = k
		s.reuseMu.Unlock()
	}
	return c, err
}

// SequenceLengths returns the lengths of global chunk i's sequences, as its shard gives them.
func (s *Source) SequenceLengths(i int) ([]int64, error) {
	if err := s.checkIndex(i); err != nil {
		return nil, err
	}
	k, local := s.Locate(i)
	src, err := s.shard(k)
	if err != nil {
		return nil, err
	}
	return src.SequenceLengths(local)
}

// RawSamples passes on where global chunk i's shard describes its samples
// (mlfeed.RawSampler). A shard that does not, or fails to open, gives ok false: the engine
// then reads the chunk, which reports the error.
func (s *Source) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if s.checkIndex(i) != nil {
		return nil, 0, 0, 0, false
	}
	k, local := s.Locate(i)
	src, err := s.shard(k)
	if err != nil {
		return nil, 0, 0, 0, false
	}
	if rs, is := src.(mlfeed.RawSampler); is {
		return rs.RawSamples(local, stream)
	}
	return nil, 0, 0, 0, false
}

// Details reports the shards, for `mlfeed info`.
func (s *Source) Details() map[string]any {
	d := map[string]any{"shards": len(s.paths), "manifest": s.m != nil}
	if s.m != nil {
		d["format"] = s.m.Format
	}
	return d
}

// Close closes every shard that was opened.
func (s *Source) Close() error {
	var first error
	for k := range s.shards {
		st := &s.shards[k]
		st.mu.Lock()
		if st.src != nil {
			if err := st.src.Close(); err != nil && first == nil {
				first = err
			}
			st.src = nil
		}
		st.err = fmt.Errorf("shard: %s: source closed", s.paths[k])
		st.mu.Unlock()
	}
	return first
}

// Check opens every shard, as reading its chunks would, and checks it against its manifest
// entry (streams, types, chunk table); each problem goes to report. It returns the number of
// shards with a problem. Without a manifest it checks nothing more than NewSource did.
func (s *Source) Check(report func(error)) int {
	bad := 0
	for k := range s.paths {
		if _, err := s.shard(k); err != nil {
			report(err)
			bad++
		}
	}
	return bad
}
