// Package arrowcheck runs mlfeed's independent Arrow and Parquet peers from Go tests: the
// JavaScript implementation of Apache Arrow (npm apache-arrow) and DuckDB (npm
// @duckdb/node-api), driven by check.mjs beside this file. The npm packages are pinned in
// package.json and package-lock.json and installed with `npm ci` (scripts/setup.sh does it).
//
// Tests skip when node or the packages are absent, unless MLFEED_REQUIRE_PEERS is set (as CI
// sets it), in which case they fail.
package arrowcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// Row is one row in canonical form: each column's values in row order, flattened (a sparse
// sample gives its indices, then its values); numbers as float64, booleans as 0 and 1, text as
// strings, 64-bit integers as decimal strings (exact), and the bytes of values of other types as
// numbers.
type Row map[string][]any

// Dir returns the directory of check.mjs.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Require skips the test when node or the npm packages are missing (fails instead when
// MLFEED_REQUIRE_PEERS is set) and returns the node executable.
func Require(tb testing.TB) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(Dir(), "node_modules", "apache-arrow")); err != nil {
		missing = "npm packages not installed (cd internal/arrowcheck && npm ci)"
	} else if _, err := os.Stat(filepath.Join(Dir(), "node_modules", "@duckdb", "node-api")); err != nil {
		missing = "npm packages not installed (cd internal/arrowcheck && npm ci)"
	}
	if missing != "" {
		if os.Getenv("MLFEED_REQUIRE_PEERS") != "" {
			tb.Fatalf("independent Arrow/Parquet peers required: %s", missing)
		}
		tb.Skipf("independent Arrow/Parquet peers unavailable: %s", missing)
	}
	return node
}

// Run runs check.mjs with args and returns its standard output.
func Run(tb testing.TB, args ...string) ([]byte, error) {
	tb.Helper()
	node := Require(tb)
	cmd := exec.Command(node, append([]string{filepath.Join(Dir(), "check.mjs")}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node check.mjs %v: %v: %s", args, err, errb.Bytes())
	}
	return out.Bytes(), nil
}

func rows(tb testing.TB, args ...string) []Row {
	tb.Helper()
	out, err := Run(tb, args...)
	if err != nil {
		tb.Fatal(err)
	}
	var r []Row
	if err := json.Unmarshal(out, &r); err != nil {
		tb.Fatalf("node check.mjs %v: %v", args, err)
	}
	return r
}

// Dump returns the rows of file as the peer reads them (apache-arrow for Arrow IPC, DuckDB
// for Parquet).
func Dump(tb testing.TB, file string) []Row { return rows(tb, "dump", file) }

// Write has the peer write its sample file (apache-arrow for .arrow and .arrows, DuckDB for
// .parquet) and returns its rows as the peer reads them back.
func Write(tb testing.TB, file string) []Row { return rows(tb, "write", file) }

// WriteTime has the peer write a file of dates, times of day, timestamps and durations of
// every unit (apache-arrow for .arrow, DuckDB for .parquet) and returns its rows as the peer
// reads them, times as mlfeed's ticks.
func WriteTime(tb testing.TB, file string) []Row { return rows(tb, "write-time", file) }

// Rows returns the rows of src in canonical form; sequence ids, when src has them, go under
// idColumn.
func Rows(src mlfeed.Source, idColumn string) ([]Row, error) {
	schema := src.Schema()
	var out []Row
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			return nil, err
		}
		for q := 0; q < c.Sequences; q++ {
			row := Row{}
			if c.IDs != nil {
				row[idColumn] = []any{c.IDs[q]}
			}
			for k := range schema.Streams {
				st := &schema.Streams[k]
				d := &c.Streams[k]
				vals := []any{}
				for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
					from, to := d.SampleRange(st, s)
					if st.Storage == mlfeed.Sparse {
						for j := from; j < to; j++ {
							vals = append(vals, float64(d.Indices[j]))
						}
					}
					for j := from; j < to; j++ {
						vals = append(vals, value(d.Values, j)...)
					}
				}
				row[st.Name] = vals
			}
			out = append(out, row)
		}
	}
	return out, nil
}

func value(b mlfeed.Buffer, j int) []any {
	switch b.Type {
	case mlfeed.String:
		return []any{b.Strings[j]}
	case mlfeed.Int64, mlfeed.Duration, mlfeed.DateTime:
		return []any{strconv.FormatInt(b.Int64At(j), 10)}
	case mlfeed.Uint64:
		return []any{strconv.FormatUint(uint64(b.Int64At(j)), 10)}
	}
	if v := b.Float64At(j); !math.IsNaN(v) || b.Type.IsFloat() {
		return []any{v}
	}
	sz := b.Type.Size()
	out := make([]any, sz)
	for k := range out {
		out[k] = float64(b.Bytes[j*sz+k])
	}
	return out
}

// Compare returns nil when got and want hold the same rows, else the first difference.
// Numbers compare exactly (NaN equals NaN).
func Compare(got, want []Row) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Errorf("row %d: columns %v, want %v", i, keys(got[i]), keys(want[i]))
		}
		for k, w := range want[i] {
			g, ok := got[i][k]
			if !ok {
				return fmt.Errorf("row %d: no column %q", i, k)
			}
			if len(g) != len(w) {
				return fmt.Errorf("row %d column %q: %v, want %v", i, k, g, w)
			}
			for j := range w {
				if !same(g[j], w[j]) {
					return fmt.Errorf("row %d column %q value %d: %v, want %v", i, k, j, g[j], w[j])
				}
			}
		}
	}
	return nil
}

func same(a, b any) bool {
	fa, ok1 := a.(float64)
	fb, ok2 := b.(float64)
	if ok1 && ok2 {
		return fa == fb || math.IsNaN(fa) && math.IsNaN(fb)
	}
	return a == b
}

func keys(r Row) []string {
	var out []string
	for k := range r {
		out = append(out, k)
	}
	return out
}
