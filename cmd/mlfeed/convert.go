package main

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/bytesize"
	"github.com/mlfeed/mlfeed/internal/closer"
)

// maxChunkSize bounds convert --chunk-size (a chunk is held in memory while it is written).
const maxChunkSize = 1 << 36

func init() {
	var in inputFlags
	var to, typ, compress, compat, chunkSizeFlag string
	var densify, quiet bool
	var wparams, streams []string
	var sf shardFlags
	cmd := &cobra.Command{
		Use:   "convert [flags] INPUT... OUTPUT",
		Short: "Convert a data set to another format, element type or compression",
		Long: `convert reads the inputs as one data set and writes OUTPUT, streaming chunk by chunk in
bounded memory. The output format comes from OUTPUT's extension or --to (a format's name,
or one of its extensions):

` + format.Writable() + `
The output file appears only when the conversion succeeds.

Conversion is lossless or fails: --type refuses values the new type cannot hold exactly, and
a format that cannot hold the data (sparse streams in IDX without --densify, text in IDX)
is an error naming what cannot be carried. A sample's multi-axis shape (an image's 28x28)
that the output format cannot hold (CBF, CTF) is stored flat, with a notice on stderr
(unless -q).
A progress bar is shown on a terminal.`,
		Example: `  mlfeed convert t10k-images-idx3-ubyte.gz images-f32.idx --type float32
  mlfeed convert t10k-images-idx3-ubyte images.idx.gz
  mlfeed convert images.idx labels.idx --streams labels only-labels.idx
  mlfeed convert --input features:dense:784 --input labels:dense:10 train.ctf train.cbf
  mlfeed convert --input x:sparse:100 in.ctf out.cbf --compat ctf2bin --chunk-size 10000`,
		Args: filesArgs(&in, 2),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			inputs, out := args[:len(args)-1], args[len(args)-1]
			if fi, err := os.Stat(out); err == nil && fi.IsDir() && !sf.sharded(out) && !dirOutput(to) {
				return usageErr("%s is a directory that holds other files: give an output file name, or write shards (--shards N, --shard-size SIZE) into an empty directory or a new one", out)
			}
			switch compress {
			case "", "gzip", "deflate", "none":
			default:
				return usageErr("--compress %q: want gzip, deflate or none", compress)
			}
			chunkSize, err := bytesize.Parse(chunkSizeFlag)
			if err != nil {
				return usageErr("--chunk-size %q: %v", chunkSizeFlag, err)
			}
			if err := checkRange("--chunk-size", chunkSize, 0, maxChunkSize); err != nil {
				return err
			}
			opts := &convert.Options{Densify: densify, Streams: streams}
			if !quiet {
				opts.Log = cmd.ErrOrStderr()
			}
			if to != "" {
				ft, err := format.Resolve(to)
				if err != nil {
					return usageErr("--to: %v", err)
				}
				opts.Format = ft
			} else if _, ok := format.ByExtension(out); !ok && !sf.sharded(out) {
				return usageErr("cannot tell the output format from %q; name it with --to", out)
			}
			if typ != "" {
				t, err := mlfeed.ParseElemType(typ)
				if err != nil {
					return usageErr("%v", err)
				}
				opts.Type = t
				in.elemType = t
			}
			p, err := parseParams(wparams, "--write-opt")
			if err != nil {
				return err
			}
			opts.Write = format.WriteOptions{Compress: compress, Compat: compat, ChunkSize: chunkSize, Params: p}
			in.sequential = true
			src, err := in.open(inputs)
			if err != nil {
				return err
			}
			defer closer.Into(src, &err)
			if !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
				_, total := mlfeed.Totals(src.Chunks())
				bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(os.Stderr),
					progressbar.OptionSetDescription("converting"), progressbar.OptionShowCount(),
					progressbar.OptionSetItsString("samples"), progressbar.OptionShowIts(),
					progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())
				opts.Progress = func(done, _ int64) { bar.Set64(done) }
				defer bar.Finish()
			}
			if sf.sharded(out) {
				so, err := sf.options(opts)
				if err != nil {
					return err
				}
				return convertShards(cmd.Context(), cmd, src, out, so)
			}
			return convert.File(cmd.Context(), src, out, opts)
		},
	}
	in.register(cmd)
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "output `FORMAT` (default: from OUTPUT's extension)")
	f.StringVar(&typ, "type", "", "convert numeric streams to element `TYPE` (float32, uint8, ...)")
	f.StringVar(&compress, "compress", "", "compression: gzip, deflate or none (default: the format's, or the name's)")
	f.StringVar(&compat, "compat", "", "reproduce a reference tool's output byte for byte (ctf2bin)")
	f.StringVar(&chunkSizeFlag, "chunk-size", "", "target chunk `SIZE` in bytes, or with a unit: 64MiB, 64M, 1GB (default: the format's)")
	f.BoolVar(&densify, "densify", false, "store sparse streams densely")
	f.StringSliceVar(&streams, "streams", nil, "write only these streams, in this order (`NAME,...`)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar and no notices")
	f.StringArrayVarP(&wparams, "write-opt", "W", nil, "format-specific writer option `KEY=VALUE` (repeatable)")
	rootCmd.AddCommand(cmd)
}

// dirOutput reports whether the format --to names writes a directory (MDS), which convert
// checks itself: it may exist if empty.
func dirOutput(to string) bool {
	ft, err := format.Resolve(to)
	return to != "" && err == nil && ft.IsDir()
}
