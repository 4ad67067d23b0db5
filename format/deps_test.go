package format_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// arrowGo is what arrow-go's arrow, arrow/array and arrow/ipc bring with them (hashes, JSON,
// flatbuffers, codecs).
var arrowGo = []string{
	"github.com/apache/arrow-go/", "github.com/goccy/go-json", "github.com/google/flatbuffers/",
	"github.com/google/uuid", "github.com/klauspost/cpuid/", "github.com/pierrec/lz4/",
	"github.com/zeebo/xxh3",
}

// heavyArrow are the parts of arrow-go no format links: its compute kernels (6 MB), Flight
// (grpc, protobuf) and its Parquet packages (pqarrow imports Flight; parquet/file imports
// compute). format/parquet reads and writes through parquet-go instead.
var heavyArrow = []string{
	"github.com/apache/arrow-go/v18/arrow/compute", "github.com/apache/arrow-go/v18/arrow/flight",
	"github.com/apache/arrow-go/v18/parquet", "google.golang.org/grpc",
}

// parquetGo is what github.com/parquet-go/parquet-go, format/parquet's codec, brings (its
// geometry and protobuf support come with its root package; brotli imports net/http for an
// HTTP handler).
var parquetGo = []string{"github.com/parquet-go/", "github.com/twpayne/go-geom", "google.golang.org/protobuf/", "github.com/andybalholm/brotli"}

// A program pays for what it imports: the data model, the registry and every format package
// link nothing outside the standard library, golang.org/x, this module's own non-network
// packages and the format's codec libraries (klauspost/compress; pierrec/lz4 for HDF5's LZ4
// filter; arrow-go's arrow and ipc for Arrow and Parquet, never its compute kernels, Flight or
// grpc; parquet-go for Parquet; protobuf's wire format for TFRecord; xxhash for MDS). In
// particular no storage driver, no cloud SDK, and (but for the HTTP handler of brotli, which
// parquet-go imports) no network code.
func TestFormatDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over every format package")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "github.com/mlfeed/mlfeed", "github.com/mlfeed/mlfeed/format/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/mlfeed/mlfeed/format/all" {
			continue // every format's together
		}
		deps, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		allowed := []string{"golang.org/x/", "github.com/klauspost/compress", "github.com/pierrec/lz4/"}
		arrow := strings.HasSuffix(pkg, "/format/arrow") || strings.HasSuffix(pkg, "/format/parquet") || strings.Contains(pkg, "/format/arrow/") || strings.Contains(pkg, "/format/parquet/")
		if arrow {
			allowed = append(allowed, arrowGo...)
		}
		parquet := strings.Contains(pkg, "/format/parquet")
		if parquet {
			allowed = append(allowed, parquetGo...)
		}
		if strings.Contains(pkg, "/format/tfrecord") {
			allowed = append(allowed, "google.golang.org/protobuf/") // protowire, its codec
		}
		if strings.Contains(pkg, "/format/mds") {
			allowed = append(allowed, "github.com/cespare/xxhash/") // Streaming's xxh64 hash

		}
		for _, d := range strings.Fields(string(deps)) {
			first, _, _ := strings.Cut(d, "/")
			ok := !strings.Contains(first, ".") && d != "net/http" // the standard library, but for HTTP
			if d == "net/http" && parquet {
				ok = true
			}
			if rest, own := strings.CutPrefix(d, "github.com/mlfeed/mlfeed"); own {
				ok = !strings.HasPrefix(rest, "/storage") && !strings.HasPrefix(rest, "/dataset") && !strings.HasPrefix(rest, "/shard")
			}
			for _, a := range allowed {
				ok = ok || strings.HasPrefix(d, a)
			}
			for _, h := range heavyArrow {
				ok = ok && !strings.HasPrefix(d, h)
			}
			if !ok {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
}

// A small program that reads IDX through format/idx (format/idx/internal/readidx) builds, as a
// release builds (stripped, -trimpath, no cgo), to at most 5 MB: before the registry stopped
// opening data sets it linked 866 packages, cloud SDKs among them, into 67 MB.
func TestProgramSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "readidx")
	cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "github.com/mlfeed/mlfeed/format/idx/internal/readidx")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 5<<20 {
		t.Errorf("a program reading IDX is %d bytes, over 5 MiB", fi.Size())
	}
	got, err := exec.Command(bin, filepath.Join("..", "testdata", "mnist", "t10k-labels-idx1-ubyte.gz")).Output()
	if err != nil || strings.TrimSpace(string(got)) != "uint8 [2000]" {
		t.Errorf("readidx: %q, %v", got, err)
	}
}
