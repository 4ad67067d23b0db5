// Package shard reads and describes data sets stored as many files (shards): a directory, a
// glob or a manifest resolves to shards in name order, and NewSource presents them as one
// mlfeed.Source with one global chunk table, so that the block randomizer, workers and
// checkpoints span shards unchanged.
//
// A sharded data set written by mlfeed (package convert) carries a manifest, mlfeed.json,
// beside its shards: the format, the schema, and per shard its sequences, samples, chunk
// table, size and SHA-256. With a manifest, a reader learns the whole chunk table without
// opening any shard and opens only the shards whose chunks it reads. Conversion run as N
// independent tasks (Kubernetes Indexed Jobs, Slurm arrays) writes partial manifests,
// mlfeed.task-IIIII-of-NNNNN.json, that Merge joins into the data set's manifest.
package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/indexcache"
)

// ManifestName is the file name of a sharded data set's manifest.
const ManifestName = "mlfeed.json"

// Version is the manifest layout version this package writes. It reads version 1 too, whose
// "schema" held Go's form of the schema.
const Version = 2

// Manifest describes a sharded data set. It is stored as JSON in ManifestName, in the form
// docs/scale.md documents (see MarshalJSON).
type Manifest struct {
	// Version is the manifest layout version (Version).
	Version int
	// Format is the registered name of the shards' format ("cbf", "idx", ...).
	Format string
	// Schema is the schema every shard has (names, types, shapes, metadata).
	Schema mlfeed.Schema
	// Sequences and Samples are the data set's totals.
	Sequences int64
	Samples   int64
	// Shards lists the shards in data set order.
	Shards []Entry
	// Task is set in the partial manifest one task of a multi-task conversion writes.
	Task *Task
}

// Entry describes one shard.
type Entry struct {
	// Path is the shard's file name, relative to the manifest's directory.
	Path string `json:"path"`
	// Index is the shard's position in the whole data set (the NNNNN of part-NNNNN).
	Index int `json:"index"`
	// Sequences, Samples and Chunks count what the shard holds.
	Sequences int64 `json:"sequences"`
	Samples   int64 `json:"samples"`
	Chunks    int   `json:"chunks"`
	// ChunkTable is the shard's chunk table: sequences and samples per chunk.
	ChunkTable [][2]int64 `json:"chunk_table"`
	// Bytes is the shard's size and SHA256 the hex SHA-256 of its bytes.
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Task identifies one task of a conversion split into Count independent tasks.
type Task struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ErrManifest is wrapped by errors about a manifest or a set of shards that do not agree.
var ErrManifest = fmt.Errorf("shard: %w", mlfeed.ErrFormat)

// ChunkTable returns a source's chunk table in the manifest's form.
func ChunkTable(infos []mlfeed.ChunkInfo) [][2]int64 {
	t := make([][2]int64, len(infos))
	for i, c := range infos {
		t[i] = [2]int64{int64(c.Sequences), c.Samples}
	}
	return t
}

// Infos returns the entry's chunk table as mlfeed.ChunkInfo values.
func (e *Entry) Infos() []mlfeed.ChunkInfo {
	out := make([]mlfeed.ChunkInfo, len(e.ChunkTable))
	for i, c := range e.ChunkTable {
		out[i] = mlfeed.ChunkInfo{Sequences: int(c[0]), Samples: c[1]}
	}
	return out
}

// maxManifest bounds the size of a manifest file read into memory (a million shards with
// modest chunk tables fit).
const maxManifest = 1 << 30

// ReadManifest reads and checks the manifest file name.
func ReadManifest(name string) (*Manifest, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxManifest {
		return nil, fmt.Errorf("%s: %w: manifest of %d bytes", name, mlfeed.ErrTooLarge, fi.Size())
	}
	return DecodeManifest(name, f)
}

// DecodeManifest decodes and checks a manifest read from r; name is used in errors.
func DecodeManifest(name string, r io.Reader) (*Manifest, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, mlfeed.OffsetError(name, se.Offset, "manifest", fmt.Errorf("%w: %v", ErrManifest, err))
		}
		return nil, fmt.Errorf("%s: %w: %v", name, ErrManifest, err)
	}
	// One JSON value: data after it (a second manifest appended) is not silently ignored.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, mlfeed.OffsetError(name, end, "manifest", fmt.Errorf("%w: data after the manifest's JSON value", ErrManifest))
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

// check verifies that the manifest is consistent with itself.
func (m *Manifest) check() error {
	if m.Version != Version && m.Version != 1 {
		return fmt.Errorf("%w: manifest version %d, this mlfeed reads 1 to %d", mlfeed.ErrUnsupported, m.Version, Version)
	}
	if m.Format == "" {
		return fmt.Errorf("%w: manifest names no format", ErrManifest)
	}
	if len(m.Shards) == 0 && m.Task == nil {
		return fmt.Errorf("%w: manifest lists no shards", ErrManifest)
	}
	if err := m.Schema.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrManifest, err)
	}
	var seqs, samples int64
	seen := map[string]bool{}
	for i := range m.Shards {
		e := &m.Shards[i]
		if e.Path == "" || filepath.IsAbs(e.Path) || strings.Contains(filepath.ToSlash(e.Path), "../") || e.Path == ".." {
			return fmt.Errorf("%w: shard %d: path %q must be relative and inside the data set", ErrManifest, i, e.Path)
		}
		if seen[e.Path] {
			return fmt.Errorf("%w: shard %q listed twice", ErrManifest, e.Path)
		}
		seen[e.Path] = true
		if len(e.ChunkTable) != e.Chunks {
			return fmt.Errorf("%w: shard %q: %d chunks, chunk table of %d", ErrManifest, e.Path, e.Chunks, len(e.ChunkTable))
		}
		var s, n int64
		for _, c := range e.ChunkTable {
			if c[0] < 0 || c[1] < 0 {
				return fmt.Errorf("%w: shard %q: negative count in chunk table", ErrManifest, e.Path)
			}
			if c[0] > math.MaxInt64-s || c[1] > math.MaxInt64-n {
				return fmt.Errorf("%w: shard %q: chunk table sums past 2^63", ErrManifest, e.Path)
			}
			s += c[0]
			n += c[1]
		}
		if s != e.Sequences || n != e.Samples {
			return fmt.Errorf("%w: shard %q: chunk table sums to %d sequences and %d samples, entry says %d and %d", ErrManifest, e.Path, s, n, e.Sequences, e.Samples)
		}
		if s > math.MaxInt64-seqs || n > math.MaxInt64-samples {
			return fmt.Errorf("%w: shards sum past 2^63", ErrManifest)
		}
		seqs += s
		samples += n
	}
	if m.Task == nil && (seqs != m.Sequences || samples != m.Samples) {
		return fmt.Errorf("%w: shards sum to %d sequences and %d samples, manifest says %d and %d", ErrManifest, seqs, samples, m.Sequences, m.Samples)
	}
	if m.Task != nil && (m.Task.Count < 1 || m.Task.Index < 0 || m.Task.Index >= m.Task.Count) {
		return fmt.Errorf("%w: task %d of %d", ErrManifest, m.Task.Index, m.Task.Count)
	}
	return nil
}

// Marshal returns the manifest as indented JSON.
func (m *Manifest) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Resolve turns one input argument into the shards it names, in data set order, and the
// data set's manifest when there is one:
//   - a manifest file (named mlfeed.json, or any .json file that decodes as one): its shards;
//   - a directory: its manifest when it has one, else every regular, non-hidden file in it in
//     name order (a directory with the partial manifests of unmerged tasks is an error);
//   - a pattern with glob metacharacters (*, ?, [) that names no existing file: the matching
//     files in name order, expanded here so that it works quoted;
//   - anything else: itself, one shard.
//
// isSharded reports whether arg named a directory, glob or manifest rather than one file.
func Resolve(arg string) (paths []string, m *Manifest, isSharded bool, err error) {
	return ResolveWith(arg, nil)
}

// ResolveOptions are ResolveWith's options; nil and the zero value are Resolve's.
type ResolveOptions struct {
	// AllowOutside lets a manifest's shards resolve, through symbolic links, to regular
	// files outside the data set's directory: a data set whose directory holds links to files
	// kept elsewhere. The manifest's own paths must still be relative and inside the
	// directory (no "..", no absolute path), and every shard a regular file (a FIFO, device or
	// directory is refused without being opened). The files of a directory without a manifest
	// are its regular files, links or not followed, either way.
	AllowOutside bool
}

// ResolveWith is Resolve with options.
func ResolveWith(arg string, o *ResolveOptions) (paths []string, m *Manifest, isSharded bool, err error) {
	if o == nil {
		o = &ResolveOptions{}
	}
	fi, statErr := os.Stat(arg)
	switch {
	case statErr == nil && fi.IsDir():
		mp := filepath.Join(arg, ManifestName)
		if _, err := os.Stat(mp); err == nil {
			return resolveManifest(mp, o)
		}
		ents, err := os.ReadDir(arg)
		if err != nil {
			return nil, nil, true, err
		}
		for _, e := range ents {
			n := e.Name()
			if isTaskManifest(n) {
				return nil, nil, true, fmt.Errorf("%s: %w: it holds the manifests of a conversion's tasks (%s) but no %s: run `mlfeed merge %s` once every task is done", arg, ErrManifest, n, ManifestName, arg)
			}
			if strings.HasPrefix(n, ".") || !e.Type().IsRegular() || isIndexCache(n) {
				continue // links, FIFOs, devices, subdirectories, index caches: not the directory's shards
			}
			paths = append(paths, filepath.Join(arg, n))
		}
		if len(paths) == 0 {
			return nil, nil, true, fmt.Errorf("%s: %w: directory holds no shards", arg, ErrManifest)
		}
		return paths, nil, true, nil
	case statErr == nil && isManifestName(arg):
		return resolveManifest(arg, o)
	case statErr != nil && strings.ContainsAny(arg, "*?["):
		paths, err := filepath.Glob(arg)
		if err != nil {
			return nil, nil, true, fmt.Errorf("%s: bad pattern: %w", arg, err)
		}
		// As a shell expands it: a leading dot is matched only by a pattern's leading dot (no
		// temporary file of a conversion in progress), and an index cache is never a shard.
		dots := strings.HasPrefix(filepath.Base(arg), ".")
		paths = slices.DeleteFunc(paths, func(p string) bool {
			b := filepath.Base(p)
			return isIndexCache(b) || (!dots && strings.HasPrefix(b, "."))
		})
		if len(paths) == 0 {
			return nil, nil, true, fmt.Errorf("%s: no file matches the pattern", arg)
		}
		sort.Strings(paths)
		return paths, nil, true, nil
	}
	return []string{arg}, nil, false, nil
}

func isManifestName(name string) bool {
	return filepath.Base(name) == ManifestName
}

// isIndexCache reports whether name is that of the index a reader keeps beside its input
// (NAME.mlfeed-index, TFRecord's and WebDataset's cache_index): never a shard.
func isIndexCache(name string) bool {
	return strings.HasSuffix(name, indexcache.Suffix)
}

func isTaskManifest(name string) bool {
	return strings.HasPrefix(name, "mlfeed.task-") && strings.HasSuffix(name, ".json")
}

func resolveManifest(name string, o *ResolveOptions) ([]string, *Manifest, bool, error) {
	m, err := ReadManifest(name)
	if err != nil {
		return nil, nil, true, err
	}
	if m.Task != nil {
		return nil, nil, true, fmt.Errorf("%s: %w: a partial manifest of task %d of %d; join the tasks' manifests with `mlfeed merge`", name, ErrManifest, m.Task.Index, m.Task.Count)
	}
	dir := filepath.Dir(name)
	paths := make([]string, len(m.Shards))
	for i, e := range m.Shards {
		paths[i] = filepath.Join(dir, filepath.FromSlash(e.Path))
		check := Inside
		if o.AllowOutside {
			check = regularFile
		}
		if err := check(dir, paths[i]); err != nil {
			return nil, nil, true, err
		}
	}
	return paths, m, true, nil
}

// ErrOutside is wrapped (with ErrManifest) by the error for a shard that is not a regular
// file inside its data set's directory.
var ErrOutside = errors.New("a shard must be a regular file inside the data set's directory")

// Inside checks that the shard path, named by a data set in directory root, is a regular file
// that stays inside root once symbolic links are followed (a link to a file in the data set
// is fine, one to a file elsewhere, or through a linked directory out of it, is not), without
// opening it: a FIFO, a device or a directory is refused before anything reads it.
func Inside(root, path string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s: %w: %w: it resolves to %s, outside %s (allowed with --outside-shards)", path, ErrManifest, ErrOutside, real, root)
	}
	return regularFile(root, path)
}

// regularFile checks that the shard path is a regular file once symbolic links are followed,
// without opening it (root is unused: Inside's signature).
func regularFile(root, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: %w: it is a %s", path, ErrManifest, ErrOutside, kindOf(fi.Mode()))
	}
	return nil
}

// kindOf names a file's type for errors.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// TaskManifestName returns the file name of task index's partial manifest out of count.
func TaskManifestName(index, count int) string {
	return fmt.Sprintf("mlfeed.task-%05d-of-%05d.json", index, count)
}

// ShardName returns the file name of shard index with the extension ext (".cbf").
func ShardName(index int, ext string) string {
	return fmt.Sprintf("part-%05d%s", index, ext)
}

// Checksum returns the size and hex SHA-256 of the named file.
func Checksum(name string) (int64, string, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", name, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Verify checks every shard of the manifest in dir against its recorded size and checksum and
// reports each mismatch to report; it returns the number of problems.
func Verify(dir string, m *Manifest, report func(error)) int {
	bad := 0
	for _, e := range m.Shards {
		p := filepath.Join(dir, filepath.FromSlash(e.Path))
		n, sum, err := Checksum(p)
		switch {
		case err != nil:
			report(err)
		case n != e.Bytes:
			report(fmt.Errorf("%s: %w: %d bytes, the manifest says %d", p, ErrManifest, n, e.Bytes))
		case sum != e.SHA256:
			report(fmt.Errorf("%s: %w: SHA-256 %s, the manifest says %s", p, ErrManifest, sum, e.SHA256))
		default:
			continue
		}
		bad++
	}
	return bad
}

// SameSchema reports whether two schemas are equal in every respect a shard must share: they
// have the same form in a manifest.
func SameSchema(a, b mlfeed.Schema) bool {
	if a.HasIDs != b.HasIDs {
		return false
	}
	sa, err1 := schemaToJSON(a)
	sb, err2 := schemaToJSON(b)
	if err1 != nil || err2 != nil {
		// Metadata JSON cannot hold: compare Go's form.
		ja, err1 := json.Marshal(a)
		jb, err2 := json.Marshal(b)
		return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
	}
	ja, err1 := json.Marshal(sa)
	jb, err2 := json.Marshal(sb)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
