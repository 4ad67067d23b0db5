package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/closer"
)

func init() {
	var in inputFlags
	var asJSON, chunks bool
	cmd := &cobra.Command{
		Use:   "info [flags] FILE...",
		Short: "Show the schema, counts and chunk table of a data set (without decoding data)",
		Long: `info describes a data set: its format, streams (name, storage, element type, shape),
number of sequences and samples, and chunks. Several files that hold one record set each
(IDX images and labels) are combined into one data set.

--json prints {"format", "streams": [{"name", "storage", "type", "dim", "shape"}],
"sequences", "samples", "chunks"} plus format-specific "details".`,
		Example: `  mlfeed info t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed info --json data.cbf
  mlfeed info --input features:dense:784 --input labels:dense:10 train.ctf`,
		Args: filesArgs(&in, 1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			spec, err := in.spec(args)
			if err != nil {
				return err
			}
			src, err := spec.Open(in.ctx)
			if err != nil {
				return err
			}
			defer closer.Into(src, &err)
			return writeInfo(cmd.OutOrStdout(), spec.FormatName(), src, asJSON, chunks)
		},
	}
	in.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&chunks, "chunks", false, "list every chunk")
	rootCmd.AddCommand(cmd)
}

func writeInfo(w io.Writer, formatName string, src mlfeed.Source, asJSON, listChunks bool) error {
	sc := src.Schema()
	doc := inspect.Describe(formatName, src, listChunks)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	fmt.Fprintf(w, "format:    %s\n", doc.Format)
	fmt.Fprintf(w, "sequences: %d\nsamples:   %d\nchunks:    %d\n", doc.Sequences, doc.Samples, doc.Chunks)
	if doc.HasIDs {
		fmt.Fprintln(w, "ids:       yes")
	}
	fmt.Fprintln(w, "streams:")
	for i, st := range sc.Streams {
		fmt.Fprintf(w, "  %s\n", st)
		keys := sortedKeys(doc.Streams[i].Metadata)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s: %s\n", k, compactJSON(doc.Streams[i].Metadata[k]))
		}
	}
	if len(doc.Details) > 0 {
		fmt.Fprintln(w, "details:")
		for _, k := range sortedKeys(doc.Details) {
			fmt.Fprintf(w, "  %s: %s\n", k, compactJSON(doc.Details[k]))
		}
	}
	for i, c := range doc.ChunkList {
		fmt.Fprintf(w, "chunk %d: %d sequences, %d samples\n", i, c.Sequences, c.Samples)
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
