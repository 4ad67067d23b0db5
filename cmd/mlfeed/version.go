package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/storage"
)

// buildInfo is what `version --json` prints.
type buildInfo struct {
	Version  string   `json:"version"`
	Commit   string   `json:"commit,omitempty"`
	Time     string   `json:"time,omitempty"`
	Modified bool     `json:"modified,omitempty"`
	Go       string   `json:"go"`
	Platform string   `json:"platform"`
	HDF5     string   `json:"hdf5"`
	Formats  []string `json:"formats"`
	// Storage are the schemes of the object-storage drivers compiled in ("azblob", "gs",
	// "s3"); empty in a build with -tags mlfeed_nostorage.
	Storage []string `json:"storage"`
}

// Set at link time by scripts/release.sh (go build -ldflags "-X main.version=0.3.0 ..."), so that a
// release binary names its version and commit even where debug.ReadBuildInfo has no VCS stamp (a
// build with -buildvcs=false, from an archive, or go install from the module proxy). Empty in
// other builds: the toolchain's stamp is used then.
var (
	version    string // "0.3.0"
	commit     string // the full commit hash
	commitTime string // the commit's time, RFC 3339
	modified   string // "true" when the checkout had uncommitted changes
)

// readBuildInfo collects the version and commit stamped at link time, else the module version and
// VCS stamp the Go toolchain put in the binary (runtime/debug.ReadBuildInfo), and the optional
// parts compiled in. A module version's leading "v" is dropped (v0.3.0 prints as 0.3.0, as a
// release build and the Python package print it).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		HDF5: "pure Go (internal/hdf5)", Formats: format.Names(), Storage: storage.Schemes()}
	if b.Storage == nil {
		b.Storage = []string{} // [] in JSON, not null
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.Version = strings.TrimPrefix(bi.Main.Version, "v")
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		b.Commit, b.Time, b.Modified = commit, commitTime, modified == "true"
	}
	return b
}

func (b buildInfo) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "mlfeed %s\n", b.Version)
	switch {
	case b.Commit == "":
		fmt.Fprintf(&s, "commit:   unknown (not built from a git checkout)\n")
	case b.Modified:
		fmt.Fprintf(&s, "commit:   %s (%s) with uncommitted changes\n", b.Commit, b.Time)
	default:
		fmt.Fprintf(&s, "commit:   %s (%s)\n", b.Commit, b.Time)
	}
	fmt.Fprintf(&s, "go:       %s %s\n", b.Go, b.Platform)
	fmt.Fprintf(&s, "hdf5:     %s\n", b.HDF5)
	fmt.Fprintf(&s, "formats:  %s\n", strings.Join(b.Formats, " "))
	if len(b.Storage) == 0 {
		fmt.Fprintf(&s, "storage:  none (built with -tags mlfeed_nostorage: local files only)\n")
	} else {
		fmt.Fprintf(&s, "storage:  %s://\n", strings.Join(b.Storage, ":// "))
	}
	return s.String()
}

func init() {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print mlfeed's version, commit, Go version and optional parts",
		Long: `version prints the module version, the commit the binary was built from (with its time,
and whether the checkout had uncommitted changes), the Go version and platform, how HDF5 is
supported (pure Go, no C library), the formats compiled in and the object-storage drivers
(s3://, gs://, azblob://; none in a build with -tags mlfeed_nostorage, as scripts/demo.sh
makes). --version prints the same. --json prints {"version", "commit", "time", "modified",
"go", "platform", "hdf5", "formats", "storage"}.`,
		Example: `  mlfeed version
  mlfeed --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			if asJSON {
				j, err := json.MarshalIndent(b, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", j)
				return err
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), b)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rootCmd.AddCommand(cmd)
	// --version is the root's own flag, not cobra's (Command.Version): cobra prints its own
	// "NAME version V" line, and a custom version template links text/template, whose
	// reflective method calls stop the linker from dropping unused methods (10 MB).
	var showVersion bool
	rootCmd.Flags().BoolVarP(&showVersion, "version", "v", false, "print the version, as mlfeed version does")
	rootCmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !showVersion {
			return cmd.Help()
		}
		_, err := fmt.Fprint(cmd.OutOrStdout(), readBuildInfo())
		return err
	}
}
