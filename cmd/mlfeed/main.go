// Command mlfeed reads, writes, validates and converts machine-learning data sets (IDX, CTF,
// CBF, IDV, Binsparse) and runs CNTK-style minibatch reading over them.
//
// Exit status: 0 on success, 1 for invalid or unreadable data (the message names the file and
// the position) and for failed writes, 2 for wrong usage, including a format, feature or value
// that is not supported, and 128+N when signal N (SIGINT, SIGTERM, SIGHUP) ends it, after
// removing its temporary files. Errors go to standard error, data to standard output.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/ctf"
	"github.com/mlfeed/mlfeed/internal/atomicfile"
	"github.com/mlfeed/mlfeed/internal/mmap"
	_ "github.com/mlfeed/mlfeed/internal/startheap" // before the packages that allocate as they initialise
	"github.com/mlfeed/mlfeed/storage"
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

Exit status: 0 success, 1 invalid or unreadable data or a failed write, 2 wrong usage or
unsupported (format, feature, value), 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP.`,
	Example: `  mlfeed demo
  mlfeed info t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed cat --json -n 3 t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed convert train-images-idx3-ubyte.gz images.idx --type float32`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// flagError says what is wrong with a flag's value in the user's words: the flag, the value
// and what it takes, not the parser's ("strconv.ParseInt: parsing ...").
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	want := "a valid value"
	switch iv.GetFlag().Value.Type() {
	case "int", "int8", "int16", "int32", "int64":
		want = "a whole number"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		want = "a whole number, 0 or more"
	case "float32", "float64":
		want = "a number"
	case "bool":
		want = "true or false"
	case "duration":
		want = "a duration such as 30s or 5m"
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Errorf("--%s %s: out of range (want %s)", iv.GetFlag().Name, iv.GetValue(), want)
	}
	return fmt.Errorf("--%s %q: want %s", iv.GetFlag().Name, iv.GetValue(), want)
}

// stopProfile ends the CPU profile that builds with the pgoprofile tag take (pgo_profile.go).
var stopProfile = func() {}

func main() {
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", flagError(err), c.CommandPath())
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handleSignals(cancel)
	// Faults on mapped input files that shrink meanwhile become errors (see internal/mmap).
	err := mmap.Guard(func() error { return rootCmd.ExecuteContext(ctx) })
	stopProfile()
	if interrupted.Load() {
		select {} // the signal handler cleans up, reports and exits
	}
	if err == nil {
		os.Exit(exitOK)
	}
	err = noDriverError(err)
	fmt.Fprintln(os.Stderr, "mlfeed:", err)
	for _, h := range hints(err) {
		fmt.Fprintln(os.Stderr, "mlfeed: hint:", h)
	}
	os.Exit(exitCode(err))
}

// hints returns the flags that address err, for errors of the library, which speak of its
// options (and mark the conversions that would let a writer take the data: format.Needs).
func hints(err error) []string {
	var h []string
	switch {
	case errors.Is(err, storage.ErrNoDriver):
		h = append(h, noDriverHint)
	case errors.Is(err, ctf.ErrPrecision):
		h = append(h, "read at double precision with --opt precision=double (or convert with --type float64)")
	case errors.Is(err, format.ErrUsage) && strings.Contains(err.Error(), " option "):
		h = append(h, "format options are given with --opt KEY=VALUE (reading) and --write-opt KEY=VALUE (writing); `mlfeed formats` lists each format's keys")
	}
	if errors.Is(err, format.ErrNeedsDense) {
		h = append(h, "convert with --densify to store sparse streams densely")
	}
	if errors.Is(err, format.ErrNeedsType) {
		h = append(h, "convert with --type TYPE to change the element type")
	}
	if errors.Is(err, format.ErrNeedsStreams) {
		h = append(h, "choose the streams with --streams NAME,... (the others, or one output per stream)")
	}
	return h
}

// interrupted is set when a signal ends mlfeed.
var interrupted atomic.Bool

// handleSignals makes SIGINT, SIGTERM and SIGHUP remove every temporary file, print one line
// and exit with 128 + the signal's number (130, 143, 129), unless the signal was ignored when
// mlfeed started (nohup). A second signal during that is ignored: the first one's exit
// follows at once.
func handleSignals(cancel func()) {
	ignoreFileSizeSignal()
	c := make(chan os.Signal, 1)
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		// A signal ignored when mlfeed started (nohup, a background job's SIGINT) stays
		// ignored: Notify would catch it.
		if !signal.Ignored(s) {
			signal.Notify(c, s)
		}
	}
	go func() {
		sig := <-c
		interrupted.Store(true)
		cancel()
		atomicfile.Cleanup()
		fmt.Fprintf(os.Stderr, "mlfeed: interrupted by %s\n", signalName(sig))
		n := 1
		if s, ok := sig.(syscall.Signal); ok {
			n = int(s)
		}
		os.Exit(128 + n)
	}()
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

func exitCode(err error) int {
	switch {
	case errors.Is(err, format.ErrUsage), errors.Is(err, mlfeed.ErrUnknownFormat), errors.Is(err, mlfeed.ErrUnsupported),
		errors.Is(err, storage.ErrNoDriver),
		strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		return exitUsage
	}
	return exitData
}

// usageErr returns an error that makes mlfeed exit with status 2.
func usageErr(f string, args ...any) error {
	return fmt.Errorf("%w: %s", format.ErrUsage, fmt.Sprintf(f, args...))
}

// checkRange returns a usage error naming the flag and the limits when v is outside
// [lo, hi]: sizes that flags ask for are checked before anything is allocated for them.
func checkRange(flag string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return usageErr("%s %d is out of range: it must be from %d to %d", flag, v, lo, hi)
	}
	return nil
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

// filesArgs is atLeastArgs(n) for a command whose files --config may name instead: with a
// CNTK configuration, the reader section's data files stand for the FILE arguments.
func filesArgs(in *inputFlags, n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if in.config != "" && len(args) >= n-1 {
			return nil
		}
		return atLeastArgs(n)(cmd, args)
	}
}

// createOutput creates a file a command writes besides data on standard output (show --png,
// batches --save-state): atomically, or directly into a device or a FIFO, or standard output
// for "-"; a directory or a socket is a usage error.
func createOutput(name string) (*atomicfile.File, error) {
	if name == "-" {
		return atomicfile.Stdout(), nil
	}
	f, err := atomicfile.Create(name)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, usageErr("%v", err)
	}
	return f, err
}
