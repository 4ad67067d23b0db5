package main

import (
	"bufio"
	"context"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/closer"
)

func init() {
	var in inputFlags
	var asJSON bool
	var limit int64
	cmd := &cobra.Command{
		Use:   "cat [flags] FILE...",
		Short: "Print sequences as CTF text or as JSON lines",
		Long: `cat prints the data set's sequences in file order: as CNTK Text Format by default, or with
--json one JSON object per sequence: "id" (when the source has ids), then one key per stream
whose value is the list of its samples. A dense sample is a flat list of numbers, a sparse
sample {"indices": [...], "values": [...]}, text a JSON string; NaN and infinities are null.`,
		Example: `  mlfeed cat --json -n 3 t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed cat -n 10 data.cbf`,
		Args: filesArgs(&in, 1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if cmd.Flags().Changed("lines") {
				if err := checkRange("-n", limit, 0, math.MaxInt64); err != nil {
					return err
				}
			}
			src, err := in.open(args)
			if err != nil {
				return err
			}
			defer closer.Into(src, &err)
			w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
			if asJSON {
				err = catJSON(cmd.Context(), w, src, limit)
			} else {
				err = catCTF(cmd.Context(), src, limit)
			}
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
	in.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per sequence")
	cmd.Flags().Int64VarP(&limit, "lines", "n", -1, "stop after `N` sequences")
	cmd.Flags().Lookup("lines").DefValue = "all"
	rootCmd.AddCommand(cmd)
}

// eachSequence calls fn for every sequence of src in order, up to limit (negative: all).
func eachSequence(ctx context.Context, src mlfeed.Source, limit int64, fn func(c *mlfeed.Chunk, q int) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var n int64
	ra := readAhead(ctx, src, false)
	defer ra.Close()
	for ra.Next() {
		if limit >= 0 && n >= limit {
			return nil
		}
		c := ra.Chunk()
		for q := 0; q < c.Sequences; q++ {
			if limit >= 0 && n >= limit {
				return nil
			}
			if err := fn(c, q); err != nil {
				return err
			}
			n++
		}
	}
	return ra.Err()
}

func catJSON(ctx context.Context, w *bufio.Writer, src mlfeed.Source, limit int64) error {
	sc := src.Schema()
	var buf []byte
	return eachSequence(ctx, src, limit, func(c *mlfeed.Chunk, q int) error {
		buf = inspect.AppendSequence(buf[:0], &sc, c, q)
		buf = append(buf, '\n')
		_, err := w.Write(buf)
		return err
	})
}

// catCTF prints the sequences through the CTF writer.
func catCTF(ctx context.Context, src mlfeed.Source, limit int64) error {
	ft, ok := format.Lookup("ctf")
	if !ok {
		return usageErr("CTF output is not available in this build; use --json")
	}
	sink, err := ft.Create(os.Stdout, src.Schema(), &format.WriteOptions{})
	if err != nil {
		return err
	}
	if limit < 0 {
		err = convert.Copy(ctx, sink, src, nil)
	} else {
		err = eachSequence(ctx, src, limit, func(c *mlfeed.Chunk, q int) error {
			return sink.WriteChunk(c.Slice(q, q+1))
		})
	}
	if err != nil {
		return err
	}
	return sink.Close()
}
