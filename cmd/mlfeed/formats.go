package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all" // the formats this build knows: all of them
)

// formatInfo is one line of `formats`, and one object of `formats --json`.
type formatInfo struct {
	Name       string   `json:"name"`
	Read       bool     `json:"read"`
	Write      bool     `json:"write"`
	Stream     bool     `json:"stream"`
	Magic      bool     `json:"magic"`
	Extensions []string `json:"extensions"`
	Note       string   `json:"note,omitempty"`
	// ReadOptions and WriteOptions are the format's --opt and --write-opt keys.
	ReadOptions  []optionInfo `json:"read_options,omitempty"`
	WriteOptions []optionInfo `json:"write_options,omitempty"`
}

// optionInfo is one format option key.
type optionInfo struct {
	Name    string   `json:"name"`
	Doc     string   `json:"doc"`
	Aliases []string `json:"aliases,omitempty"`
}

func optionInfos(ps []format.Param) []optionInfo {
	var out []optionInfo
	for _, p := range ps {
		out = append(out, optionInfo{Name: p.Name, Doc: p.Doc, Aliases: p.Aliases})
	}
	return out
}

func init() {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "formats",
		Short: "List the formats this build reads and writes",
		Long: `formats lists every format this build of mlfeed knows: whether it reads and writes it,
whether its output can stream (go to standard output with OUTPUT "-", or into a pipe),
whether input is detected from magic bytes (else from the extension alone), and the
extensions that select it; then each format's options (--opt KEY=VALUE for reading,
--write-opt KEY=VALUE for writing). --json prints a list of {"name", "read", "write",
"stream", "magic", "extensions", "note", "read_options", "write_options"} objects, each
option {"name", "doc", "aliases"}.`,
		Example: `  mlfeed formats
  mlfeed formats --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list := formatList()
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "FORMAT\tREAD\tWRITE\tSTREAM\tMAGIC\tEXTENSIONS\tNOTE")
			for _, f := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, yes(f.Read), yes(f.Write), yes(f.Stream), yes(f.Magic),
					strings.Join(f.Extensions, " "), f.Note)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, f := range list {
				for _, o := range []struct {
					flag string
					list []optionInfo
				}{{"--opt", f.ReadOptions}, {"--write-opt", f.WriteOptions}} {
					if len(o.list) == 0 {
						continue
					}
					fmt.Fprintf(out, "\n%s %s KEY=VALUE:\n", f.Name, o.flag)
					for _, p := range o.list {
						also := ""
						if len(p.Aliases) > 0 {
							also = " (also " + strings.Join(p.Aliases, ", ") + ")"
						}
						fmt.Fprintf(out, "  %s%s: %s\n", p.Name, also, p.Doc)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rootCmd.AddCommand(cmd)
}

// formatList describes the registered formats.
func formatList() []formatInfo {
	var list []formatInfo
	for _, f := range format.All() {
		fi := formatInfo{Name: f.Name, Read: f.Open != nil, Write: f.Writable(), Stream: f.Create != nil && f.Streamable,
			Magic: f.Match != nil, Extensions: append([]string{}, f.Extensions...),
			ReadOptions: optionInfos(f.ReadParams), WriteOptions: optionInfos(f.WriteParams)}
		if f.IsDir() {
			fi.Note = "a directory, detected by its contents"
		}
		list = append(list, fi)
	}
	return list
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}
