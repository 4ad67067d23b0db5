package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/storage"
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
too but do not make a file invalid. A FILE may be an object-storage URL or prefix (s3://,
gs://, azblob://): each object is checked from a local copy (its copy in the node cache with
--cache), and a shard of a data set with a manifest against its size and SHA-256 too. The exit status is 0 when every file is valid, 1 otherwise, and 2
for wrong flags.`,
		Example: `  mlfeed validate t10k-images-idx3-ubyte.gz
  mlfeed validate --cache /local/cache s3://corpus/train/
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
			var files []string
			bad, sets := 0, 0 // failed files; failed arguments (data sets, objects not listed)
			// check validates the file at path, reported as name (an object's URL for its
			// local copy).
			check := func(name, path, formatName string) error {
				files = append(files, name)
				n, err := validateFile(in.ctx, path, formatName, opts, maxReport, func(e error) {
					fmt.Fprintln(stderr, strings.ReplaceAll(e.Error(), path, name))
				})
				switch {
				case err != nil && errors.Is(err, format.ErrUsage):
					return err // wrong flags: the same for every file
				case err != nil:
					fmt.Fprintln(stderr, strings.ReplaceAll(err.Error(), path, name))
					fmt.Fprintf(stdout, "%s: not checked\n", name)
					bad++
				case n == 0:
					fmt.Fprintf(stdout, "%s: ok\n", name)
				default:
					fmt.Fprintf(stdout, "%s: invalid, %d problem(s)\n", name, n)
					bad++
				}
				return nil
			}
			for _, arg := range args {
				if storage.IsURL(arg) {
					// Each object through a local copy: the node cache's (--cache), else a
					// temporary one.
					err := dataset.ObjectFiles(in.ctx, arg, func(url, path, formatName string, err error) error {
						if err != nil {
							files = append(files, url)
							fmt.Fprintln(stderr, err)
							fmt.Fprintf(stdout, "%s: not checked\n", url)
							bad++
							return nil
						}
						if spec.Format != "" {
							formatName = spec.Format
						}
						return check(url, path, formatName)
					})
					if err != nil && (errors.Is(err, format.ErrUsage) || errors.Is(err, storage.ErrNoDriver)) {
						return err // wrong flags, or a build without drivers: the same for every URL
					}
					if err != nil {
						fmt.Fprintln(stderr, err)
						fmt.Fprintf(stdout, "%s: not checked\n", arg)
						sets++
					}
					continue
				}
				local, failed := shardFiles([]string{arg}, spec.Format, opts, func(e error) { fmt.Fprintln(stderr, e) }, stdout)
				sets += failed
				for _, name := range local {
					if err := check(name, name, spec.FormatFor([]string{name})); err != nil {
						return err
					}
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
