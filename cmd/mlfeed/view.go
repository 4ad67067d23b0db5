package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed/stats"
	"github.com/mlfeed/mlfeed/view"
)

func init() {
	var in inputFlags
	var port int
	var opts stats.Options
	cmd := &cobra.Command{
		Use:   "view [flags] DATA... [-- DATA...]",
		Short: "Look at a data set in a local web page",
		Long: `view serves a page about a data set on this computer's loopback address (127.0.0.1, a
free port unless --port) until Ctrl-C: its format, files or shards, streams with their types
and shapes, counts and chunks; each stream's statistics (those of mlfeed stats) as charts that
fill in while one pass reads the data; image streams (dense [H W], [H W 1], [H W 3], a square
dimension such as 784, or bytes holding PNG or JPEG) as a grid of thumbnails with their labels;
the label distribution; and a record browser that pages through the sequences.

Inputs given after "--" are a second data set: the page shows the two side by side and says
whether they hold the same values, or where they first differ (as mlfeed.Diff compares).

The address printed on standard error carries a token made for this run; the page refuses
requests without it, and requests whose Host header is not 127.0.0.1 or localhost with the
page's port (so another web site cannot read the data). The page is read-only, needs no
network (everything is in the mlfeed binary) and serves nothing but the data sets given.`,
		Example: `  mlfeed view t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed view --port 8080 shards/
  mlfeed view --input features:sparse:100000 --input labels:dense:10 train.ctf
  mlfeed view train.ctf -- converted.cbf`,
		Args: filesArgs(&in, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkRange("--port", int64(port), 0, 65535); err != nil {
				return err
			}
			if err := checkRange("--limit", opts.Limit, 0, math.MaxInt64); err != nil {
				return err
			}
			if err := checkRange("--bins", int64(opts.Bins), 1, 10000); err != nil {
				return err
			}
			groups := [][]string{args}
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				// The arguments after "--" name the second data set (takeDefines removed
				// none of them unless --config is given, which one data set uses).
				if dash == 0 || dash >= len(args) {
					return usageErr("give inputs on both sides of \"--\" to compare two data sets")
				}
				groups = [][]string{args[:dash], args[dash:]}
			}
			var sets []view.DataSet
			defer func() {
				for _, s := range sets {
					s.Source.Close()
				}
			}()
			for _, g := range groups {
				spec, err := in.spec(g)
				if err != nil {
					return err
				}
				src, err := spec.Open(in.ctx)
				if err != nil {
					return err
				}
				files, _ := spec.Files()
				if files == nil {
					files = g
				}
				names := make([]string, len(g))
				for i, a := range g {
					names[i] = filepath.Base(a)
				}
				if len(g) == 0 {
					names = []string{in.config}
				}
				sets = append(sets, view.DataSet{Name: strings.Join(names, " "), Format: spec.FormatName(), Files: files, Source: src})
			}
			return serveView(cmd, sets, port, opts)
		},
	}
	in.register(cmd)
	f := cmd.Flags()
	f.IntVar(&port, "port", 0, "serve on this `PORT` of 127.0.0.1 (0: a free one)")
	f.Int64Var(&opts.Limit, "limit", 0, "compute the statistics of the first `N` sequences only (0: all)")
	f.IntVar(&opts.Bins, "bins", stats.DefaultBins, "histogram bins (at most `N`)")
	f.IntVar(&opts.Top, "top", stats.DefaultTop, "most frequent values and indices to show (`N`)")
	rootCmd.AddCommand(cmd)
}

// serveView serves the page on 127.0.0.1 until the command's context is cancelled (Ctrl-C).
func serveView(cmd *cobra.Command, sets []view.DataSet, port int, opts stats.Options) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	token := view.NewToken()
	h, err := view.New(sets, view.Options{Token: token, Port: port, Stats: opts})
	if err != nil {
		ln.Close()
		return err
	}
	ctx := cmd.Context()
	h.Start(ctx)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "mlfeed view: serving on http://127.0.0.1:%d/?token=%s (Ctrl-C stops)\n", port, token)
	select {
	case err := <-done:
		return fmt.Errorf("view: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		srv.Close()
	}
	return nil
}
