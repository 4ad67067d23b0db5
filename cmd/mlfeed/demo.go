package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/atomicfile"
	"github.com/mlfeed/mlfeed/minibatch"
	"github.com/mlfeed/mlfeed/render"
)

func init() {
	var dir string
	var n int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run mlfeed end to end on a built-in data set (offline)",
		Long: `demo generates a small MNIST-like data set of digit images and labels built into mlfeed
(deterministic, no download), writes it as IDX, converts it (uint8 to float32, gzip) and into
every other format this build can write, reads each back, checks that every value survived,
runs one randomized sweep of minibatches over it, and shows the first digits. The files stay in --dir (default: a temporary directory that is
removed afterwards).`,
		Example: `  mlfeed demo
  mlfeed demo --dir /tmp/mlfeed-demo -n 5000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkRange("-n", int64(n), 1, maxDemoRecords); err != nil {
				return err
			}
			keep := dir != ""
			if !keep {
				var remove func()
				if dir, remove, err = atomicfile.MkdirTemp("mlfeed-demo-*"); err != nil {
					return err
				}
				defer remove()
			} else {
				var made []string
				if made, err = mkdirAll(dir); err != nil {
					return err
				}
				// A demo that fails (a full disk, an interrupt) leaves no directory it made:
				// its files are gone already (each is written atomically).
				defer func() {
					if err != nil {
						for _, d := range made {
							os.Remove(d) // only if empty
						}
					}
				}()
			}
			return runDemo(cmd.Context(), cmd.OutOrStdout(), dir, n, seed, keep)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "keep the files in `DIR`")
	cmd.Flags().IntVarP(&n, "records", "n", 2000, "number of digits to generate")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "generator seed")
	rootCmd.AddCommand(cmd)
}

// mkdirAll is os.MkdirAll, returning the directories it made, the deepest first; where it
// fails, it removes those it made.
func mkdirAll(dir string) ([]string, error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !os.IsNotExist(err) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for _, d := range made {
			os.Remove(d)
		}
		return nil, err
	}
	return made, nil
}

// maxDemoRecords bounds demo -n: the generated set is held in memory (784 bytes a digit) and
// written in every format.
const maxDemoRecords = 100_000

func runDemo(ctx context.Context, w io.Writer, dir string, n int, seed uint64, keep bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	t0 := time.Now()
	data := demo.Source(n, seed)
	fmt.Fprintf(w, "generated %d digits of 28x28 uint8 pixels with labels (seed %d) in %v\n", n, seed, since(t0))
	step := func(what string, fn func() error) error {
		t := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		fmt.Fprintf(w, "  %-58s %8v\n", what, since(t))
		return nil
	}
	images := filepath.Join(dir, "demo-images-idx3-ubyte")
	labels := filepath.Join(dir, "demo-labels-idx1-ubyte")
	f32 := filepath.Join(dir, "demo-images-f32.idx.gz")
	idxFmt, _ := format.Lookup("idx")
	fmt.Fprintln(w, "IDX:")
	if err := step("wrote "+filepath.Base(images), func() error {
		return convert.File(ctx, data, images, &convert.Options{Format: idxFmt, Streams: []string{"features"}})
	}); err != nil {
		return err
	}
	if err := step("wrote "+filepath.Base(labels), func() error {
		return convert.File(ctx, data, labels, &convert.Options{Format: idxFmt, Streams: []string{"labels"}})
	}); err != nil {
		return err
	}
	if err := step("converted images to float32, gzip: "+filepath.Base(f32), func() error {
		src, err := dataset.OpenFiles([]string{images}, "", nil)
		if err != nil {
			return err
		}
		defer src.Close()
		return convert.File(ctx, src, f32, &convert.Options{Type: mlfeed.Float32})
	}); err != nil {
		return err
	}
	for _, pair := range [][]string{{images, labels}, {f32, labels}} {
		if err := step("read back "+filepath.Base(pair[0])+" + labels: identical", func() error {
			return checkSame(ctx, data, pair, nil)
		}); err != nil {
			return err
		}
	}
	// Every other format this build can write.
	for _, ft := range format.All() {
		if ft.Name == "idx" || ft.IsDir() || !ft.Writable() {
			continue
		}
		out := filepath.Join(dir, "demo"+ft.Ext())
		fmt.Fprintf(w, "%s:\n", ft.Name)
		// Formats that hold only floats get the pixels as float32: still lossless.
		var err error
		for _, typ := range []mlfeed.ElemType{mlfeed.Invalid, mlfeed.Float32} {
			what := "wrote " + filepath.Base(out) + " and read it back: identical"
			if typ != mlfeed.Invalid {
				what = "wrote " + filepath.Base(out) + " as " + typ.String() + ", read back: identical"
			}
			t := time.Now()
			if err = roundTrip(ctx, data, []string{images, labels}, out, ft, typ); err == nil {
				fmt.Fprintf(w, "  %-58s %8v\n", what, since(t))
				break
			}
			if !errors.Is(err, mlfeed.ErrUnsupported) {
				return fmt.Errorf("%s: %w", ft.Name, err)
			}
		}
		if err != nil {
			fmt.Fprintf(w, "  skipped, this build cannot write it: %v\n", err)
		}
	}
	src, err := dataset.OpenFiles([]string{images, labels}, "", nil)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Fprintln(w, "minibatches:")
	var batches, seen int
	if err := step("one randomized sweep, minibatches of 64 (CNTK's randomizer)", func() error {
		r, err := minibatch.New(src, minibatch.Config{MinibatchSize: 64})
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			batches++
			seen += r.Batch().Sequences
			if r.Batch().EndOfSweep {
				break
			}
		}
		return r.Err()
	}); err != nil {
		return err
	}
	if seen != n {
		return fmt.Errorf("a sweep delivered %d sequences, want %d", seen, n)
	}
	fmt.Fprintf(w, "  %d minibatches, every one of the %d digits exactly once\n", batches, n)
	c, err := src.ReadChunk(ctx, 0)
	if err != nil {
		return err
	}
	sc := src.Schema()
	fmt.Fprintln(w, "the first two digits:")
	for q := 0; q < min(2, c.Sequences); q++ {
		img := render.ImageOf(&sc.Streams[0], &c.Streams[0], int64(q), demo.Side, demo.Side)
		fmt.Fprintf(w, "record %d%s\n%s", q, labelText(&sc, c, q, 0), img.Art())
	}
	if keep {
		fmt.Fprintf(w, "files are in %s\n", dir)
	}
	fmt.Fprintf(w, "demo ok in %v\n", since(t0))
	return nil
}

// roundTrip converts the inputs to out in format ft (element type typ unless Invalid) and
// compares what it reads back with want.
func roundTrip(ctx context.Context, want mlfeed.Source, inputs []string, out string, ft *format.Format, typ mlfeed.ElemType) error {
	src, err := dataset.OpenFiles(inputs, "", nil)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := convert.File(ctx, src, out, &convert.Options{Format: ft, Type: typ}); err != nil {
		return err
	}
	schema, err := convert.TargetSchema(src.Schema(), &convert.Options{Type: typ})
	if err != nil {
		return err
	}
	// Formats that need declarations (CTF) read numbers as floats: declare integer streams as
	// float64, which holds every value the demo writes.
	for i := range schema.Streams {
		if st := &schema.Streams[i]; !st.Type.IsFloat() {
			st.Type = mlfeed.Float64
		}
	}
	return checkSame(ctx, want, []string{out}, &format.Options{Inputs: schema.Streams})
}

// checkSame opens names as one source and compares it with want.
func checkSame(ctx context.Context, want mlfeed.Source, names []string, opts *format.Options) error {
	got, err := dataset.OpenFiles(names, "", opts)
	if err != nil {
		return err
	}
	defer got.Close()
	return mlfeed.Diff(ctx, want, got)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond / 10) }
