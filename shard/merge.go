package shard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed/internal/atomicfile"
	"github.com/mlfeed/mlfeed/storage"
)

// WriteManifest writes m to the file name atomically.
func WriteManifest(name string, m *Manifest) error {
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(name)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Commit()
}

// Merge joins the partial manifests that the tasks of a conversion wrote into dir (a local
// directory, or an object-storage prefix such as s3://bucket/out/) into the data set's
// manifest, checks that every task is there and that they agree on format and schema, writes
// mlfeed.json and then removes the partial manifests. It returns the merged manifest.
func Merge(dir string) (*Manifest, error) {
	return MergeContext(context.Background(), dir)
}

// MergeContext is Merge with a context for object storage.
func MergeContext(ctx context.Context, dir string) (*Manifest, error) {
	st := store{ctx: ctx, dir: dir, url: storage.IsURL(dir)}
	names, err := st.list()
	if err != nil {
		return nil, err
	}
	var parts []*Manifest
	var paths []string
	for _, n := range names {
		if !isTaskManifest(n) {
			continue
		}
		p := st.path(n)
		b, err := st.read(n)
		if err != nil {
			return nil, err
		}
		m, err := DecodeManifest(p, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if m.Task == nil {
			return nil, fmt.Errorf("%s: %w: not a task's manifest", p, ErrManifest)
		}
		parts = append(parts, m)
		paths = append(paths, n)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: %w: no task manifests (mlfeed.task-*.json) to merge", dir, ErrManifest)
	}
	count := parts[0].Task.Count
	byIndex := make([]*Manifest, count)
	for i, m := range parts {
		p, p0 := st.path(paths[i]), st.path(paths[0])
		switch {
		case m.Task.Count != count:
			return nil, fmt.Errorf("%s: %w: task of %d tasks, %s is of %d", p, ErrManifest, m.Task.Count, p0, count)
		case m.Format != parts[0].Format:
			return nil, fmt.Errorf("%s: %w: format %s, %s has %s", p, ErrManifest, m.Format, p0, parts[0].Format)
		case !SameSchema(m.Schema, parts[0].Schema):
			return nil, fmt.Errorf("%s: %w: its streams differ from %s's", p, ErrManifest, p0)
		case byIndex[m.Task.Index] != nil:
			return nil, fmt.Errorf("%s: %w: task %d appears twice", p, ErrManifest, m.Task.Index)
		}
		byIndex[m.Task.Index] = m
	}
	var missing []string
	for i, m := range byIndex {
		if m == nil {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: %w: tasks %s of %d have not finished (no manifest)", dir, ErrManifest, strings.Join(missing, ", "), count)
	}
	out := &Manifest{Version: Version, Format: parts[0].Format, Schema: parts[0].Schema}
	for _, m := range byIndex {
		out.Shards = append(out.Shards, m.Shards...)
		out.Sequences += m.Sequences
		out.Samples += m.Samples
	}
	sort.SliceStable(out.Shards, func(a, b int) bool { return out.Shards[a].Index < out.Shards[b].Index })
	for i, e := range out.Shards {
		if e.Index != i {
			return nil, fmt.Errorf("%s: %w: shard %d is missing (next listed is %d)", dir, ErrManifest, i, e.Index)
		}
	}
	if err := out.check(); err != nil {
		return nil, err
	}
	b, err := out.Marshal()
	if err != nil {
		return nil, err
	}
	if err := st.write(ManifestName, b); err != nil {
		return nil, err
	}
	for _, n := range paths {
		st.remove(n)
	}
	return out, nil
}

// store is a directory: local, or a prefix in object storage.
type store struct {
	ctx context.Context
	dir string
	url bool
}

func (s store) path(name string) string {
	if s.url {
		return storage.Join(s.dir, name)
	}
	return filepath.Join(s.dir, name)
}

// list returns the names of the files (objects) directly in the directory.
func (s store) list() ([]string, error) {
	if !s.url {
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out, nil
	}
	urls, err := storage.List(s.ctx, storage.Join(s.dir, ""))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range urls {
		b, _, _ := strings.Cut(u, "?")
		out = append(out, path.Base(b))
	}
	return out, nil
}

func (s store) read(name string) ([]byte, error) {
	if s.url {
		return storage.ReadFile(s.ctx, s.path(name), maxManifest)
	}
	f, err := os.Open(s.path(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxManifest+1))
}

func (s store) write(name string, b []byte) error {
	if s.url {
		return storage.WriteFile(s.ctx, s.path(name), b)
	}
	f, err := atomicfile.Create(s.path(name))
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("%s: %w", s.path(name), err)
	}
	return f.Commit()
}

func (s store) remove(name string) {
	if s.url {
		storage.Delete(s.ctx, s.path(name))
		return
	}
	os.Remove(s.path(name))
}

// TaskFromEnv returns this process's task index and the number of tasks as a job runner
// sets them: Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX; the count is the job's
// completions, which the pod does not see: pass it as count), Slurm job arrays
// (SLURM_ARRAY_TASK_ID counted from SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) and AWS
// Batch array jobs (AWS_BATCH_JOB_ARRAY_INDEX; count as for Kubernetes). count, when
// positive, overrides the count the environment gives. ok is false when none is set.
func TaskFromEnv(getenv func(string) string, count int) (index, n int, ok bool, err error) {
	num := func(name string) (int, bool, error) {
		v := getenv(name)
		if v == "" {
			return 0, false, nil
		}
		x, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || x < 0 {
			return 0, true, fmt.Errorf("$%s=%q is not a task number", name, v)
		}
		return x, true, nil
	}
	for _, name := range []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "AWS_BATCH_JOB_ARRAY_INDEX"} {
		i, set, err := num(name)
		if err != nil {
			return 0, 0, true, err
		}
		if !set {
			continue
		}
		n := count
		if name == "SLURM_ARRAY_TASK_ID" {
			lo, _, err := num("SLURM_ARRAY_TASK_MIN")
			if err != nil {
				return 0, 0, true, err
			}
			i -= lo
			if n <= 0 {
				c, set, err := num("SLURM_ARRAY_TASK_COUNT")
				if err != nil {
					return 0, 0, true, err
				}
				if set {
					n = c
				}
			}
		}
		if n <= 0 {
			return 0, 0, true, fmt.Errorf("$%s is set but the number of tasks is not: give it (--task-count)", name)
		}
		if i < 0 || i >= n {
			return 0, 0, true, fmt.Errorf("task %d (from $%s) is not below the number of tasks, %d", i, name, n)
		}
		return i, n, true, nil
	}
	return 0, 0, false, nil
}
