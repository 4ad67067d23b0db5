package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
)

func init() {
	var in inputFlags
	var maxReport int
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE...",
		Short: "Check files strictly; exit 1 with the reasons if any is invalid",
		Long: `validate checks each file strictly against its format and reports every problem found, up
to --max problems per file, each naming the file and the position (line:column for text,
byte offset for binary data), on standard error. Every file is checked, also after one that
fails; standard output gets one line per file ("FILE: ok", "FILE: invalid, N problem(s)" or
"FILE: not checked" when it cannot be read or its format is unknown or unsupported) and, for
several files, a summary. Warnings (a CTF value float32 cannot hold as written) are printed
too but do not make a file invalid. The exit status is 0 when every file is valid, 1 otherwise, and 2
for wrong flags.`,
		Example: `  mlfeed validate t10k-images-idx3-ubyte.gz
  mlfeed validate --input features:dense:5 --input labels:dense:3 data.ctf`,
		Args: atLeastArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkRange("--max", int64(maxReport), 1, math.MaxInt32); err != nil {
				return err
			}
			spec, err := in.spec(args)
			if err != nil {
				return err
			}
			opts, err := spec.FormatOptions(in.ctx)
			if err != nil {
				return err
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			files, sets := shardFiles(args, spec.Format, opts, func(e error) { fmt.Fprintln(stderr, e) }, stdout)
			bad := 0
			for _, name := range files {
				n, err := validateFile(cmd.Context(), name, spec.FormatFor([]string{name}), opts, maxReport, func(e error) {
					fmt.Fprintln(stderr, e)
				})
				switch {
				case err != nil && errors.Is(err, format.ErrUsage):
					return err // wrong flags: the same for every file
				case err != nil:
					fmt.Fprintln(stderr, err)
					fmt.Fprintf(stdout, "%s: not checked\n", name)
					bad++
				case n == 0:
					fmt.Fprintf(stdout, "%s: ok\n", name)
				default:
					fmt.Fprintf(stdout, "%s: invalid, %d problem(s)\n", name, n)
					bad++
				}
			}
			if len(files) > 1 {
				fmt.Fprintf(stdout, "%d file(s): %d ok, %d failed\n", len(files), len(files)-bad, bad)
			}
			return validateErr(bad, len(files), sets, len(args))

		},
	}
	in.register(cmd)
	cmd.Flags().IntVar(&maxReport, "max", 100, "report at most `N` problems per file")
	rootCmd.AddCommand(cmd)
}

// validateErr is validate's error for bad of files files and badSets of args arguments (data
// sets whose manifest differs from their shards, or that name no file to check) that failed,
// or nil.
func validateErr(bad, files, badSets, args int) error {
	var parts []string
	if badSets > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d argument(s)", badSets, args))
	}
	if bad > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d file(s)", bad, files))
	}
	if parts == nil {
		return nil
	}
	return fmt.Errorf("%s failed validation", strings.Join(parts, " and "))
}

// validateFile checks one file (see inspect.Validate).
func validateFile(ctx context.Context, name, formatName string, opts *format.Options, max int, report func(error)) (int, error) {
	return inspect.Validate(ctx, name, formatName, opts, max, report)
}
