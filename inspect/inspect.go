// Package inspect describes and checks data sets as `mlfeed info`, `cat --json` and `mlfeed
// validate` do: the JSON of the CLI's contract (DESIGN.md), built once for the command line and
// for the Python package's C ABI, so that both give the same answers.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Stream is one stream as `info --json` lists it.
type Stream struct {
	Name          string         `json:"name"`
	Alias         string         `json:"alias,omitempty"`
	Storage       string         `json:"storage"`
	Type          string         `json:"type"`
	Dim           int            `json:"dim"`
	Shape         []int          `json:"shape"`
	KeyCount      uint64         `json:"key_count,omitempty"`
	DefinesMBSize bool           `json:"defines_mb_size,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// ChunkRow is one row of the chunk table.
type ChunkRow struct {
	Sequences int   `json:"sequences"`
	Samples   int64 `json:"samples"`
}

// Info is the document `mlfeed info --json` prints.
type Info struct {
	Format    string         `json:"format"`
	Streams   []Stream       `json:"streams"`
	Sequences int64          `json:"sequences"`
	Samples   int64          `json:"samples"`
	Chunks    int            `json:"chunks"`
	HasIDs    bool           `json:"has_ids,omitempty"`
	ChunkList []ChunkRow     `json:"chunk_table,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
}

// Describe returns the info document of src, whose format is called formatName; chunks lists
// the chunk table too. It decodes nothing.
func Describe(formatName string, src mlfeed.Source, chunks bool) *Info {
	sc := src.Schema()
	table := src.Chunks()
	doc := &Info{Format: formatName, Chunks: len(table), HasIDs: sc.HasIDs, Streams: Streams(&sc)}
	doc.Sequences, doc.Samples = mlfeed.Totals(table)
	if chunks {
		for _, c := range table {
			doc.ChunkList = append(doc.ChunkList, ChunkRow{c.Sequences, c.Samples})
		}
	}
	if d, ok := src.(mlfeed.Detailer); ok {
		doc.Details = d.Details()
	}
	return doc
}

// Streams returns the streams of sc as `info --json` lists them.
func Streams(sc *mlfeed.Schema) []Stream {
	out := []Stream{}
	for _, st := range sc.Streams {
		is := Stream{Name: st.Name, Alias: st.Alias, Storage: st.Storage.String(), Type: st.Type.String(),
			Dim: st.Dim, Shape: st.SampleShape(), KeyCount: st.KeyCount, DefinesMBSize: st.DefinesMBSize}
		for _, a := range st.Metadata {
			if is.Metadata == nil {
				is.Metadata = map[string]any{}
			}
			is.Metadata[a.Name] = annotationValue(&a)
		}
		out = append(out, is)
	}
	return out
}

// annotationValue renders a metadata item as JSON-ready data: its one sample.
func annotationValue(a *mlfeed.Annotation) any {
	if len(a.Data.SeqStart) < 2 || a.Data.Samples() == 0 {
		return nil
	}
	return SampleJSON(&a.Desc, &a.Data, 0)
}

// IsUsage reports whether err means the check could not run for a reason of usage, not of
// data: wrong options, an unknown or unsupported format.
func IsUsage(err error) bool {
	return errors.Is(err, format.ErrUsage) || errors.Is(err, mlfeed.ErrUnknownFormat) || errors.Is(err, mlfeed.ErrUnsupported)
}

// Validate checks the named file strictly, as `mlfeed validate` does: with its format's own
// validator when it has one, else by decoding every chunk and checking it against the schema
// and the chunk table. Each problem goes to report, up to max of them; warnings
// (format.IsWarning: worth knowing, the file stays valid) go to report too, up to max, and do
// not count. It returns the number of problems. The error is non-nil only when the check
// could not run: usage (IsUsage), ctx ended, or the system failed (a full disk, a file that
// cannot be read: an error number, not an error of the format).
func Validate(ctx context.Context, name, formatName string, opts *format.Options, max int, report func(error)) (int, error) {
	var ft *format.Format
	if formatName != "" {
		var err error
		if ft, err = format.Resolve(formatName); err != nil {
			return 0, fmt.Errorf("%w: %w", format.ErrUsage, err)
		}
	} else if ft = format.DetectDir(name); ft == nil {
		var err error
		if ft, err = format.Detect(name); err != nil {
			return 0, err
		}
	}
	n, warnings := 0, 0
	add := func(e error) bool {
		if format.IsWarning(e) {
			if warnings++; warnings <= max {
				report(e)
			}
			return true
		}
		if n++; n <= max {
			report(e)
		}
		return n < max
	}
	var err error
	if ft.Validate != nil {
		err = ft.Validate(name, opts, add)
	} else {
		err = readAll(ctx, ft, name, opts)
	}
	switch {
	case err == nil:
	case IsUsage(err), ctx.Err() != nil, systemError(err):
		return n, err
	default:
		add(err)
	}
	return n, nil
}

// systemError reports whether err is the system's rather than the data's: an error number
// (a full disk, a temporary directory that is missing, a file that cannot be read) in an
// error that is not one of the format. The file could then not be checked.
func systemError(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && !errors.Is(err, mlfeed.ErrFormat)
}

// readAll opens a file and decodes and checks every chunk, reading ahead on the scheduler ctx
// carries: the strict check of formats whose reader validates everything it reads.
func readAll(ctx context.Context, ft *format.Format, name string, opts *format.Options) error {
	src, err := ft.Open(name, opts)
	if err != nil {
		return err
	}
	defer src.Close()
	sc := src.Schema()
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	table := src.Chunks()
	s := sched.FromContext(ctx)
	if s == nil {
		s = sched.New(0, 0)
	}
	order := make([]int, len(table))
	for i := range order {
		order[i] = i
	}
	ra := s.ReadAhead(ctx, src, order, &sched.ReadAheadOptions{Recycle: true})
	defer ra.Close()
	for ra.Next() {
		i, info, c := ra.Index(), table[ra.Index()], ra.Chunk()
		if err := c.Validate(&sc); err != nil {
			return fmt.Errorf("%s: chunk %d: %w", name, i, err)
		}
		if c.Sequences != info.Sequences {
			return fmt.Errorf("%s: chunk %d: %w: holds %d sequences, the chunk table says %d", name, i, mlfeed.ErrFormat, c.Sequences, info.Sequences)
		}
	}
	return ra.Err()
}
