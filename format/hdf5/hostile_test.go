package hdf5_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/hdf5"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// The files of ../../internal/hdf5/testdata/hostile.py (h5py 3.7.0, HDF5 1.10.8), issue 28.

// TestGraphFiles reads files whose groups link back to themselves and to the root, share
// groups, hold soft, dangling and external links: every dataset once, in h5py's order, the
// links that lead nowhere reported, not fatal. The test's timeout bounds the work.
func TestGraphFiles(t *testing.T) {
	for _, lib := range []string{"earliest", "latest"} {
		name := "../../internal/hdf5/testdata/graph_" + lib + ".h5"
		var log bytes.Buffer
		r, err := hdf5.Open(name, &hdf5.ReaderOptions{Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range r.Schema().Streams {
			names = append(names, s.Name)
		}
		if want := []string{"X", "a/s2/w", "g/z", "y"}; !reflect.DeepEqual(names, want) {
			t.Errorf("%s: streams %q, want %q (h5py's visititems)", lib, names, want)
		}
		got := readAll(t, r)
		want := h5pyRead(t, name)
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v.Values) {
				t.Errorf("%s: %s differs from h5py", lib, k)
			}
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 4 || !strings.Contains(lines[0], "/dangle: soft link to /nowhere") || !strings.Contains(lines[1], "/ext: external link to other.h5:/X") {
			t.Errorf("%s: log\n%s", lib, log.String())
		}
		d := r.Details()
		if len(d["skipped"].([]string)) != 4 || len(d["links"].([]string)) != 3 {
			t.Errorf("%s: details %v", lib, d)
		}
		r.Close()
	}
	// the file, g['loop'] = g; f['a/b'] = f, through the registry as the CLI opens it
	r, err := openRegistered(t, "../../internal/hdf5/testdata/loops.h5", &format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Schema().Streams); n != 1 {
		t.Errorf("loops.h5: %d streams", n)
	}
	r.(interface{ Close() error }).Close()
}

func TestDeepChain(t *testing.T) {
	// 300 nested groups, each linking back to the root
	r, err := hdf5.Open("../../internal/hdf5/testdata/deep_latest.h5", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s := r.Schema().Streams; len(s) != 1 || s[0].Name != strings.Repeat("d/", 300)+"v" {
		t.Errorf("streams %v", s)
	}
}

func TestSoftLink(t *testing.T) {
	// f['s'] = h5py.SoftLink('/x') made the file unreadable
	for _, ds := range []string{"", "s"} {
		opts := &hdf5.ReaderOptions{}
		if ds != "" {
			opts.Datasets = []string{ds}
		}
		r, err := hdf5.Open("testdata/softlink.h5", opts)
		if err != nil {
			t.Fatalf("datasets=%q: %v", ds, err)
		}
		got := readAll(t, r)
		name := r.Schema().Streams[0].Name
		if !reflect.DeepEqual(got[name], []float64{0, 1, 2, 3, 4, 5}) || len(r.Schema().Streams) != 1 {
			t.Errorf("datasets=%q: %v", ds, got)
		}
		r.Close()
	}
}

// TestSkippedAnnounced: datasets left out (zfp, an undecodable filter) are announced, one
// line per dataset with the reason, and listed in Details. The Blosc dataset beside them (one
// frame python-blosc wrote, lz4 with byte shuffle) and the szip one (h5py's, libaec's NN with
// 8 pixels per block) read, 0 to 99 as ok holds, and so do the fields of the compound dataset
// pair (szip and pair were left out before szip and compound datasets were read).
func TestSkippedAnnounced(t *testing.T) {
	var log bytes.Buffer
	r, err := openRegistered(t, "testdata/undecodable.h5", &format.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.(interface{ Close() error }).Close()
	want := []string{"/zfp: filter 32013 (zfp)"}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("log:\n%s", log.String())
	}
	skipped := r.(*hdf5.Reader).Details()["skipped"].([]string)
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "hdf5: testdata/undecodable.h5: skipped "+w) || !strings.HasPrefix(skipped[i], w) {
			t.Errorf("line %d: %q / %q, want %q", i, lines[i], skipped[i], w)
		}
	}
	s := r.Schema().Streams
	if len(s) != 5 || s[0].Name != "blosc" || s[1].Name != "ok" || s[2].Name != "pair.a" || s[3].Name != "pair.b" || s[4].Name != "szip" {
		t.Fatalf("streams %v", s)
	}
	got := readAll(t, r.(*hdf5.Reader))
	ramp := make([]float64, 100)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	if !reflect.DeepEqual(got["blosc"], ramp) || !reflect.DeepEqual(got["ok"], ramp) || !reflect.DeepEqual(got["szip"], ramp) {
		t.Errorf("blosc %v, ok %v, szip %v, want 0 to 99", got["blosc"], got["ok"], got["szip"])
	}
	// named explicitly, a dataset left out is an error
	_, err = hdf5.Open("testdata/undecodable.h5", &hdf5.ReaderOptions{Datasets: []string{"zfp"}})
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "zfp") {
		t.Errorf("datasets=zfp: %v", err)
	}
}

// TestNothingReadable: a file whose every dataset is left out says why, not "holds no numeric
// dataset". nothing_readable.h5's compound dataset y is read now; unreadable.h5's compound
// dataset, of members this reader leaves out only, is left out naming them.
func TestNothingReadable(t *testing.T) {
	r, err := hdf5.Open("testdata/nothing_readable.h5", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Schema().Streams; len(s) != 2 || s[0].Name != "y.a" || s[1].Name != "y.b" || r.Details()["skipped"].([]string)[0] != "/X: filter 32013 (zfp) (filter pipeline at byte offset 920)" {
		t.Errorf("streams %v, details %v", s, r.Details())
	}
	r.Close()
	_, err = hdf5.Open(compoundDir+"/unreadable.h5", nil)
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `/y: compound datatype of no member this reader reads (field "pt": compound datatype (datatype at byte offset `) || !strings.Contains(err.Error(), `field "vs": variable-length datatype`) {
		t.Errorf("got %v", err)
	}
}

// openRegistered opens name through the registered format, as the CLI and Python do.
func openRegistered(t *testing.T, name string, o *format.Options) (mlfeed.Source, error) {
	t.Helper()
	f, ok := format.Lookup("hdf5")
	if !ok {
		t.Fatal("hdf5 not registered")
	}
	return f.Open(name, o)
}

// float16 datasets read as float32, exactly (numpy's astype(float32): NaN payloads,
// infinities, subnormals, -0), either byte order, contiguous or chunked with gzip; info lists
// them.
func TestFloat16(t *testing.T) {
	r, err := hdf5.Open("../../internal/hdf5/testdata/half.h5", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for k, st := range r.Schema().Streams {
		idx[st.Name] = k
		if st.Type != mlfeed.Float32 {
			t.Errorf("%s: %v", st.Name, st.Type)
		}
	}
	for _, name := range []string{"x", "xbe"} {
		if !bytes.Equal(c.Streams[idx[name]].Values.Bytes, c.Streams[idx[name+"_f4"]].Values.Bytes) {
			t.Errorf("%s differs from numpy's astype(float32)", name)
		}
	}
	if got := r.Details()["float16_read_as_float32"]; !reflect.DeepEqual(got, []string{"x", "xbe"}) {
		t.Errorf("float16_read_as_float32: %v", got)
	}
}

// TestUserDefinedLink: a user-defined link (type 187) in the HDF Group's tall_with_udlink.h5
// is left out and announced, as external links are; the file's datasets read (any link of
// that kind made the whole file unsupported before, even with the datasets option).
func TestUserDefinedLink(t *testing.T) {
	const name = "../../internal/hdf5/testdata/hdf5-json/tall_with_udlink.h5"
	var log strings.Builder
	r, err := openRegistered(t, name, &format.Options{Log: &log, Params: map[string]string{"datasets": "g2/dset2.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r.(*hdf5.Reader))
	// h5py: f['g2/dset2.1'][()] is float32 1.0 to 1.9
	want := []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9}
	for i, v := range got["g2/dset2.1"] {
		if float32(v) != float32(want[i]) {
			t.Errorf("g2/dset2.1[%d] = %v, want %v", i, v, want[i])
		}
	}
	if len(got["g2/dset2.1"]) != 10 {
		t.Errorf("g2/dset2.1: %v", got)
	}
	_, err = openRegistered(t, name, &format.Options{Log: &log})
	if !strings.Contains(log.String(), "skipped /g2/udlink: user-defined link of type 187 (not followed)") {
		t.Errorf("log %q, error %v: the user-defined link not announced", log.String(), err)
	}
}

// TestFillOnly: the HDF Group's dset_gzip.h5 holds three 1000 x 1000 float64 datasets of 100 x
// 100 chunks, none written (8 MB each of the fill value in a 1,944-byte file), which h5py reads
// as zeros; their size was refused as more than the file could hold.
func TestFillOnly(t *testing.T) {
	r, err := hdf5.Open("../../internal/hdf5/testdata/hdf5-json/dset_gzip.h5", &hdf5.ReaderOptions{Datasets: []string{"dset2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)["dset2"]
	if len(got) != 1000*1000 {
		t.Fatalf("%d values", len(got))
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("value %d is %v, want the fill value 0", i, v)
		}
	}
}

// TestStrings: datasets of strings read as h5py reads them (gen.py's strings.h5): fixed-length
// and variable-length ASCII as bytes (numpy's trailing NULs dropped), variable-length UTF-8 as
// text (what h5py's asstr() gives), 2-D and chunked with gzip too; a dataset of strings of
// another length than the data set's rows (names of classes) is left out with a line, and
// reads alone when named. They were all left out before.
func TestStrings(t *testing.T) {
	const name = "testdata/strings.h5"
	var log strings.Builder
	src, err := openRegistered(t, name, &format.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := src.(*hdf5.Reader)
	types := map[string]string{}
	for _, st := range r.Schema().Streams {
		types[st.Name] = fmt.Sprintf("%s %d", st.Type, st.Dim)
	}
	want := map[string]string{"X": "float32 2", "ascii": "bytes 1", "fixed": "bytes 1", "grid": "string 2", "text": "string 1", "ztext": "string 1"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("streams %v, want %v", types, want)
	}
	if !strings.Contains(log.String(), "skipped /names: 3 strings, where the data set has 6 rows") {
		t.Errorf("log %q", log.String())
	}
	text := []string{"cat", "dög", "", "日本語", "a longer label, with a comma", "z"}
	var grid []string
	for _, s := range text {
		grid = append(grid, s, strings.ToUpper(s))
	}
	wantVals := map[string][]string{"text": text, "ztext": text, "grid": grid,
		"ascii": {"a", "bb", "", "dddd", "e", "ffffff"}, "fixed": {"one", "two", "three", "", "fives", "x"}}
	got := map[string][]string{}
	for i := range r.Chunks() {
		c, err := r.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		for k, st := range r.Schema().Streams {
			got[st.Name] = append(got[st.Name], c.Streams[k].Values.Strings...)
		}
	}
	for k, w := range wantVals {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	alone, err := hdf5.Open(name, &hdf5.ReaderOptions{Datasets: []string{"names"}})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	c, err := alone.ReadChunk(context.Background(), 0)
	if err != nil || !reflect.DeepEqual(c.Streams[0].Values.Strings, []string{"red", "green", "blue"}) {
		t.Errorf("names alone: %v %v", c, err)
	}
}

// TestStringsBudget: a global heap collection larger than the memory budget is refused before
// it is read (ErrTooLarge naming --memory), as a chunk that decodes to more is.
func TestStringsBudget(t *testing.T) {
	r, err := hdf5.Open("testdata/strings.h5", &hdf5.ReaderOptions{Datasets: []string{"text"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := sched.WithContext(context.Background(), sched.New(1, 1024))
	if _, err := r.ReadChunk(ctx, 0); !errors.Is(err, mlfeed.ErrTooLarge) || !strings.Contains(err.Error(), "a collection of") || !strings.Contains(err.Error(), "--memory") {
		t.Errorf("a 1 KiB budget: %v, want ErrTooLarge naming --memory", err)
	}
	if _, err := r.ReadChunk(context.Background(), 0); err != nil {
		t.Errorf("the default budget: %v", err)
	}
}
