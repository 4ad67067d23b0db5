// Command mlfeed reads, writes, validates and converts machine-learning data sets (IDX, CTF,
// CBF, IDV, Binsparse) and runs CNTK-style minibatch reading over them.
//
// Exit status: 0 on success, 1 for invalid or unreadable data (the message names the file and
// the position), 2 for wrong usage, including a format or command that is not supported.
// Errors go to standard error, data to standard output.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// Exit statuses.
const (
	exitOK    = 0
	exitData  = 1
	exitUsage = 2
)

var rootCmd = &cobra.Command{
	Use:   "mlfeed",
	Short: "Read, write, validate and convert ML training data; feed minibatches",
	Long: `mlfeed reads, writes, validates and converts machine-learning data sets and feeds
shuffled minibatches from them the way CNTK's readers did.

Formats are detected from a file's first bytes, then from its name; output formats come
from the output name's extension or --to.

Exit status: 0 success, 1 invalid or unreadable data, 2 wrong usage.`,
	Example: `  mlfeed demo
  mlfeed info t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed cat --json -n 3 t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed convert train-images-idx3-ubyte.gz images.idx --type float32`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	err := rootCmd.Execute()
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "mlfeed:", err)
	os.Exit(exitCode(err))
}

func exitCode(err error) int {
	switch {
	case errors.Is(err, format.ErrUsage), errors.Is(err, mlfeed.ErrUnknownFormat),
		strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		return exitUsage
	}
	return exitData
}

// usageErr returns an error that makes mlfeed exit with status 2.
func usageErr(f string, args ...any) error {
	return fmt.Errorf("%w: %s", format.ErrUsage, fmt.Sprintf(f, args...))
}

// atLeastArgs is cobra.MinimumNArgs with a usage error.
func atLeastArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s needs at least %d file argument(s) (see '%s --help')", cmd.Name(), n, cmd.CommandPath())
		}
		return nil
	}
}
