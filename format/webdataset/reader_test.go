package webdataset

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// shards are the real shards of testdata/ (see its README).
var shards = []string{"sample.tgz", "compressed.tar", "mpdata-20.tar", "testgz-16.tar", "written.tar", "written.tar.gz"}

// pySample is a sample as testdata/tarread.py prints it.
type pySample struct {
	Key     string             `json:"key"`
	Streams map[string]pyValue `json:"streams"`
}

type pyValue struct {
	Int    *string  `json:"int,omitempty"`
	Text   *string  `json:"text,omitempty"`
	B64    *string  `json:"b64,omitempty"`
	Dtype  string   `json:"dtype,omitempty"`
	Shape  []int    `json:"shape,omitempty"`
	Values []string `json:"values,omitempty"`
}

// independent reads a shard with testdata/tarread.py (Python's tarfile and numpy).
func independent(t *testing.T, path string) []pySample {
	t.Helper()
	py := testutil.Python(t, "numpy")
	out, err := exec.Command(py, filepath.Join("testdata", "tarread.py"), path).Output()
	if err != nil {
		t.Fatalf("tarread.py %s: %v", path, err)
	}
	var s []pySample
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// readAll reads every chunk of src.
func readAll(t testing.TB, src mlfeed.Source) []*mlfeed.Chunk {
	t.Helper()
	var cs []*mlfeed.Chunk
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if err := c.Validate(ptr(src.Schema())); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		cs = append(cs, c)
	}
	return cs
}

func ptr[T any](v T) *T { return &v }

// checkAgainst compares what rd reads with the independent reader's samples.
func checkAgainst(t *testing.T, rd *Reader, want []pySample) {
	t.Helper()
	sc := rd.Schema()
	q := 0
	for _, c := range readAll(t, rd) {
		for k := 0; k < c.Sequences; k++ {
			if q >= len(want) {
				t.Fatalf("more samples than tarfile reads (%d)", len(want))
			}
			w := want[q]
			if c.IDs[k] != w.Key {
				t.Fatalf("sample %d: key %q, tarfile says %q", q, c.IDs[k], w.Key)
			}
			present := 0
			for s := range sc.Streams {
				st := &sc.Streams[s]
				d := &c.Streams[s]
				n := d.SeqStart[k+1] - d.SeqStart[k]
				pv, ok := w.Streams[st.Name]
				if !ok {
					if n != 0 {
						t.Fatalf("sample %q: stream %q has %d samples, tarfile has no member", w.Key, st.Name, n)
					}
					continue
				}
				present++
				if n != 1 {
					t.Fatalf("sample %q: stream %q has %d samples, want 1", w.Key, st.Name, n)
				}
				checkValue(t, w.Key, st, d, d.SeqStart[k], pv)
			}
			if present != len(w.Streams) {
				t.Fatalf("sample %q: %d streams, tarfile has %d", w.Key, present, len(w.Streams))
			}
			q++
		}
	}
	if q != len(want) {
		t.Fatalf("%d samples, tarfile reads %d", q, len(want))
	}
}

func checkValue(t *testing.T, key string, st *mlfeed.Stream, d *mlfeed.StreamData, s int64, pv pyValue) {
	t.Helper()
	from, to := d.SampleRange(st, s)
	where := fmt.Sprintf("sample %q stream %q", key, st.Name)
	switch {
	case pv.Int != nil:
		if st.Type != mlfeed.Int64 || strconv.FormatInt(d.Values.Int64s()[from], 10) != *pv.Int {
			t.Fatalf("%s: %s %v, tarfile says int %s", where, st.Type, d.Values.Float64At(from), *pv.Int)
		}
	case pv.Text != nil:
		if st.Type != mlfeed.String || d.Values.Strings[from] != *pv.Text {
			t.Fatalf("%s: %s, tarfile says text %q", where, st.Type, *pv.Text)
		}
	case pv.B64 != nil:
		if st.Type != mlfeed.Bytes || base64.StdEncoding.EncodeToString([]byte(d.Values.Strings[from])) != *pv.B64 {
			t.Fatalf("%s: %s differs from tarfile's bytes", where, st.Type)
		}
	default:
		if st.Type.String() != pv.Dtype && !(pv.Dtype == "bool" && st.Type == mlfeed.Bool) {
			t.Fatalf("%s: type %s, numpy says %s", where, st.Type, pv.Dtype)
		}
		shape := st.SampleShape()
		if st.Dim == 0 && st.Shape == nil {
			shape = []int{to - from}
		}
		if len(pv.Shape) == 0 {
			pv.Shape = []int{1} // a 0-d array is a sample of one value
		}
		if !reflect.DeepEqual(shape, pv.Shape) || to-from != len(pv.Values) {
			t.Fatalf("%s: shape %v (%d values), numpy says %v", where, shape, to-from, pv.Shape)
		}
		for i, v := range pv.Values {
			got := d.Values.Float64At(from + i)
			if st.Type.IsFloat() {
				want, _ := strconv.ParseFloat(v, 64)
				if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("%s value %d: %v, numpy says %s", where, i, got, v)
				}
			} else if strconv.FormatFloat(got, 'f', -1, 64) != v {
				t.Fatalf("%s value %d: %v, numpy says %s", where, i, got, v)
			}
		}
	}
}

// The real shards read as Python's tarfile and numpy read them, grouped as webdataset
// groups them; in chunks of one sample and of the default size alike.
func TestRealShards(t *testing.T) {
	for _, name := range shards {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			want := independent(t, path)
			for _, cs := range []int64{0, 1} {
				rd, err := Open(path, &ReaderOptions{ChunkSize: cs})
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, rd, want)
				if cs == 1 && len(rd.Chunks()) != len(want) {
					t.Errorf("chunk_size 1: %d chunks for %d samples", len(rd.Chunks()), len(want))
				}
				rd.Close()
			}
			// Read with ReadAt (as from object storage), through a scan window of 1 and 3 KiB.
			data, _ := os.ReadFile(path)
			defer func(w int64) { windowSize = w }(windowSize)
			for _, w := range []int64{1 << 10, 3 << 10} {
				windowSize = w
				rd, err := NewReader(bytes.NewReader(data), int64(len(data)), &ReaderOptions{FileName: name, ChunkSize: 5000})
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, rd, want)
			}
		})
	}
}

// What each real shard's schema is, and the details.
func TestRealSchemas(t *testing.T) {
	want := map[string]string{
		"sample.tgz":     "cls dense int64 1; png dense bytes 1",
		"compressed.tar": "txt.gz dense bytes 1",
		"written.tar":    "be.npy dense int32 3; cls dense int64 1; f32.npy dense float32 3x4; f64.npy dense float64 5; fortran.npy dense int16 2x3; jpg dense bytes 1; json dense string 1; txt dense string 1; vec.npy dense uint8 variable",
	}
	for name, w := range want {
		rd, err := Open(filepath.Join("testdata", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, st := range rd.Schema().Streams {
			got = append(got, st.String())
		}
		if strings.Join(got, "; ") != w || !rd.Schema().HasIDs {
			t.Errorf("%s: %s, want %s", name, strings.Join(got, "; "), w)
		}
		rd.Close()
	}
	rd, err := Open(filepath.Join("testdata", "compressed.tar"), &ReaderOptions{Decode: DecodeNone})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if d := rd.Details(); d["members_skipped"] != 1 || d["samples"] != 3 || d["compression"] != "none" {
		t.Errorf("details %v", d)
	}
	rd2, err := Open(filepath.Join("testdata", "written.tar.gz"), &ReaderOptions{Decode: DecodeNone})
	if err != nil {
		t.Fatal(err)
	}
	defer rd2.Close()
	for _, st := range rd2.Schema().Streams {
		if st.Type != mlfeed.Bytes {
			t.Errorf("decode=none: %s", st.String())
		}
	}
}

// SplitName agrees with webdataset's regular expression.
func TestSplitName(t *testing.T) {
	names := []string{"a.b", "a.txt.gz", "dir/a.jpg", "d.x/a.jpg", "d/.hidden.txt", "d.x/.hidden",
		"a/b.c/d", ".a", "a", "a.", "a/", "/a.b", "x/y/z.tar.gz", "a..b", "dir/sub/.x.y", "a.b/c/.d",
		"a\n.b", "a.b\n", "a/\n.b", "", "..", "./a.b", "a/./b.c", "__key__.txt", "__meta__/x.y", "a/__x__.y"}
	alphabet := []string{"a", ".", "/", "b"}
	for n := 1; n <= 5; n++ {
		var gen func(prefix string, k int)
		gen = func(prefix string, k int) {
			if k == 0 {
				names = append(names, prefix)
				return
			}
			for _, c := range alphabet {
				gen(prefix+c, k-1)
			}
		}
		gen("", n)
	}
	for _, name := range names {
		k, e, ok := SplitName(name)
		rk, re, rok := splitNameRE(name)
		if k != rk || e != re || ok != rok {
			t.Errorf("SplitName(%q) = %q, %q, %v; the pattern says %q, %q, %v", name, k, e, ok, rk, re, rok)
		}
	}
	for name, want := range map[string]bool{"__key__": true, "__meta__/x.y": true, "__x__.y": false, "a/__x__": false, "____": true, "___": false} {
		if isMeta(name) != want {
			t.Errorf("isMeta(%q) = %v", name, !want)
		}
	}
}

// tarOf builds a tar archive of name, content pairs.
func tarOf(t testing.TB, pairs ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: pairs[i], Mode: 0o644, Size: int64(len(pairs[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(pairs[i+1]))
	}
	tw.Close()
	return b.Bytes()
}

func openBytes(data []byte, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{FileName: "x.tar"}
	if opts != nil {
		o = *opts
		o.FileName = "x.tar"
	}
	return NewReader(bytes.NewReader(data), int64(len(data)), &o)
}

func npyBytes(descr string, shape []int, data []byte) string {
	return string(append(npy.AppendHeader(nil, descr, shape), data...))
}

// Grouping and typing: adjacent members by key, a missing member as an empty sequence, the
// same key again later as a new sample, integers and text decoded.
func TestMappingRules(t *testing.T) {
	data := tarOf(t,
		"a.cls", " 7\n", "a.txt", "x", "a.JPG", "\xff\x00",
		"b.cls", "-3", "b.jpg", "",
		"a.cls", "1_000",
		"noext", "skipped", "__meta__", "skipped",
	)
	rd, err := openBytes(data, &ReaderOptions{ChunkSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Samples() != 3 || rd.skipped != 2 {
		t.Fatalf("%d samples, %d skipped", rd.Samples(), rd.skipped)
	}
	var got []string
	for _, c := range readAll(t, rd) {
		for q := range c.Sequences {
			var parts []string
			for s, st := range rd.Schema().Streams {
				d := &c.Streams[s]
				for k := d.SeqStart[q]; k < d.SeqStart[q+1]; k++ {
					if st.Type.IsVarLen() {
						parts = append(parts, fmt.Sprintf("%s=%q", st.Name, d.Values.Strings[k]))
					} else {
						parts = append(parts, fmt.Sprintf("%s=%v", st.Name, d.Values.Int64s()[k]))
					}
				}
			}
			got = append(got, c.IDs[q]+": "+strings.Join(parts, " "))
		}
	}
	want := []string{`a: cls=7 jpg="\xff\x00" txt="x"`, `b: cls=-3 jpg=""`, `a: cls=1000`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// Broken shards: each error wraps its sentinel and names the place; none panics, and none
// allocates what a header claims.
func TestBrokenShards(t *testing.T) {
	good := tarOf(t, "a.cls", "1", "a.jpg", "xyz", "b.cls", "2", "b.jpg", "uvw")
	huge := bytes.Clone(good[:512])
	copy(huge[124:136], []byte{0x80, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}) // 1 TiB, in base 256
	fixChecksum(huge)
	badSum := bytes.Clone(good)
	badSum[512*2+10] ^= 1 // the name of member a.jpg
	bigNpy := tarOf(t, "a.npy", npyBytes("<f8", []int{1 << 40}, nil))
	cases := []struct {
		name string
		data []byte
		opts *ReaderOptions
		want error
		msg  string
	}{
		{"truncated data", good[:1536+1], nil, ErrTruncated, "byte offset 1536"},
		{"truncated header", good[:1024+100], nil, ErrTruncated, "byte offset 1024 (tar header)"},
		{"bad checksum", badSum, nil, ErrFormat, "byte offset 1024 (tar header)"},
		{"member of 1 TiB", huge, nil, ErrTruncated, "declares 1099511627776 bytes"},
		{"member beyond max_member", good, &ReaderOptions{MaxMember: 2}, ErrTooLarge, "member \"a.jpg\""},
		{"extension twice", tarOf(t, "a.cls", "1", "a.CLS", "2"), nil, ErrFormat, `second member of extension "cls"`},
		{"npy of 8 TiB", bigNpy, nil, ErrTruncated, "announces 8796093022208 bytes"},
		{"npy of two dtypes", tarOf(t, "a.npy", npyBytes("<f4", []int{1}, make([]byte, 4)), "b.npy", npyBytes("<i4", []int{1}, make([]byte, 4))), nil, ErrUnsupported, "float32 arrays"},
		{"npy shapes", tarOf(t, "a.npy", npyBytes("<f4", []int{1, 2}, make([]byte, 8)), "b.npy", npyBytes("<f4", []int{2, 1}, make([]byte, 8))), nil, ErrUnsupported, "only 1-d arrays"},
		{"npy strings", tarOf(t, "a.npy", npyBytes("<U2", []int{1}, make([]byte, 8))), nil, ErrUnsupported, "unicode"},
		{"not npy", tarOf(t, "a.npy", "not an npy array"), nil, mlfeed.ErrFormat, `member "a.npy"`},
		{"gzip garbage", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}, nil, mlfeed.ErrTruncated, "gzip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := openBytes(tc.data, tc.opts)
			if err == nil {
				_, err = rd.ReadChunk(context.Background(), 0)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "x.tar") {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.msg)
			}
		})
	}
	// Errors found while reading a chunk: a bad integer, text that is not UTF-8.
	for _, tc := range []struct {
		data []byte
		msg  string
	}{
		{tarOf(t, "a.cls", "1", "b.cls", "x1"), `byte offset 1536 (member "b.cls"): webdataset: invalid data: "x1" is not a decimal integer`},
		{tarOf(t, "a.cls", "99999999999999999999"), "beyond int64"},
		{tarOf(t, "a.txt", "\xff"), "not UTF-8"},
	} {
		rd, err := openBytes(tc.data, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rd.ReadChunk(context.Background(), 0)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("got %v, want %q", err, tc.msg)
		}
	}
}

// fixChecksum sets a tar header's checksum.
func fixChecksum(h []byte) {
	copy(h[148:156], "        ")
	var u int
	for _, c := range h[:512] {
		u += int(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", u))
}

// The index cache: written beside the shard, used while fresh, rebuilt when the shard is
// newer or the options differ, ignored when damaged.
func TestCacheIndex(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"written.tar", "sample.tgz"} {
		src, _ := os.ReadFile(filepath.Join("testdata", name))
		path := filepath.Join(dir, name)
		os.WriteFile(path, src, 0o644)
		want := independent(t, path)
		rd, err := Open(path, &ReaderOptions{CacheIndex: true})
		if err != nil {
			t.Fatal(err)
		}
		rd.Close()
		if _, err := os.Stat(path + ".mlfeed-index"); err != nil {
			t.Fatal(err)
		}
		rd, err = Open(path, &ReaderOptions{CacheIndex: true, ChunkSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rd.Details()["index_cache"] == nil {
			t.Errorf("%s: the cache was not used", name)
		}
		checkAgainst(t, rd, want)
		rd.Close()
		// decode=none does not take the default's index.
		rd, err = Open(path, &ReaderOptions{CacheIndex: true, Decode: DecodeNone})
		if err != nil {
			t.Fatal(err)
		}
		if rd.Schema().Streams[0].Type != mlfeed.Bytes {
			t.Errorf("%s: decode=none used the default's cache", name)
		}
		rd.Close()
		// A damaged cache is scanned over.
		c, _ := os.ReadFile(path + ".mlfeed-index")
		for _, cut := range []int{10, len(c) / 2, len(c) - 3} {
			os.WriteFile(path+".mlfeed-index", c[:cut], 0o644)
			rd, err = Open(path, &ReaderOptions{CacheIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, rd, want)
			rd.Close()
		}
	}
}

func TestMatch(t *testing.T) {
	for _, name := range shards {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		if !Match(data[:min(512, len(data))]) {
			t.Errorf("%s not matched", name)
		}
	}
	good := tarOf(t, "a.cls", "1")
	bad := bytes.Clone(good)
	bad[0] ^= 1
	if Match(bad[:512]) || Match([]byte("hello")) {
		t.Error("matched a broken header")
	}
}

// RawSamples describes the .npy streams of a shard whose samples are alike, with the values
// ReadChunk decodes, big-endian ones with their swap; not a chunk where a sample lacks the
// member, nor a stream of other members.
func TestRawSamples(t *testing.T) {
	var pairs []string
	for q := range 40 {
		k := fmt.Sprintf("%04d", q)
		le := make([]byte, 12)
		be := make([]byte, 8)
		for j := range 3 {
			le[4*j] = byte(q + j)
		}
		be[1], be[3] = byte(q), byte(q+1)
		pairs = append(pairs, k+".cls", "1", k+".a.npy", npyBytes("<f4", []int{3}, le), k+".b.npy", npyBytes(">i2", []int{2, 2}, be),
			k+".h.npy", npyBytes("<f2", []int{2}, []byte{byte(q), 0x3c, 0, 0xc0})) // float16: widened, so never raw
		if q != 33 {
			pairs = append(pairs, k+".c.npy", npyBytes("<u1", []int{1}, []byte{byte(q)}))
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "raw.tar")
	os.WriteFile(path, tarOf(t, pairs...), 0o644)
	for range 2 {
		// The second time from the index cache, which keeps what RawSamples needs.
		rawSamples(t, path, &ReaderOptions{ChunkSize: 30 << 10, CacheIndex: true})
	}
}

func rawSamples(t *testing.T, path string, opts *ReaderOptions) {
	rd, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.cached == "" {
		t.Fatal("no index cache")
	}
	if len(rd.Chunks()) < 2 {
		t.Fatalf("%d chunks", len(rd.Chunks()))
	}
	sc := rd.Schema()
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		for s, st := range sc.Streams {
			b, off, stride, swap, ok := rd.RawSamples(i, s)
			// Sample 33 lacks c.npy, so its members lie closer to those of sample 34.
			has := func(id string) bool { return c.IDs[0] <= id && c.IDs[len(c.IDs)-1] >= id }
			lacks := has("0033") && (st.Name == "c.npy" || has("0034"))
			if want := strings.HasSuffix(st.Name, ".npy") && st.Name != "h.npy" && !lacks; ok != want {
				t.Fatalf("chunk %d stream %s: ok %v", i, st.Name, ok)
			}
			if !ok {
				continue
			}
			sz := st.Dim * st.Type.Size()
			if st.Name == "b.npy" && swap != 2 || st.Name != "b.npy" && swap != 0 {
				t.Errorf("stream %s: swap %d", st.Name, swap)
			}
			for q := range c.Sequences {
				raw := bytes.Clone(b[off+q*stride : off+q*stride+sz])
				if swap == 2 {
					for j := 0; j < len(raw); j += 2 {
						raw[j], raw[j+1] = raw[j+1], raw[j]
					}
				}
				if !bytes.Equal(raw, c.Streams[s].Values.Bytes[q*sz:(q+1)*sz]) {
					t.Fatalf("chunk %d stream %s sample %d differs", i, st.Name, q)
				}
			}
		}
	}
}

// float16 .npy members, either byte order, read as float32 exactly.
func TestFloat16Members(t *testing.T) {
	le := []byte{0x00, 0x3c, 0x00, 0xc0, 0x55, 0x35, 0x00, 0x7c, 0x01, 0x00} // 1, -2, 0.333251953125, +Inf, 2^-24
	be := make([]byte, len(le))
	for i := 0; i < len(le); i += 2 {
		be[i], be[i+1] = le[i+1], le[i]
	}
	path := filepath.Join(t.TempDir(), "half.tar")
	os.WriteFile(path, tarOf(t, "a.le.npy", npyBytes("<f2", []int{5}, le), "a.be.npy", npyBytes(">f2", []int{5}, be)), 0o644)
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, -2, 0.333251953125, float32(math.Inf(1)), 0x1p-24}
	for s, st := range rd.Schema().Streams {
		if st.Type != mlfeed.Float32 || st.Dim != 5 {
			t.Fatalf("stream %s: %v %d", st.Name, st.Type, st.Dim)
		}
		if got := c.Streams[s].Values.Float32s(); !slices.Equal(got, want) {
			t.Errorf("stream %s: %v, want %v", st.Name, got, want)
		}
	}
}

// A gzip shard larger than max_memory is decompressed into a temporary file and read from
// there, through the scan's window.
func TestGzipBeyondMemory(t *testing.T) {
	for _, name := range []string{"sample.tgz", "written.tar.gz"} {
		path := filepath.Join("testdata", name)
		want := independent(t, path)
		rd, err := Open(path, &ReaderOptions{MaxMemory: 4096, ChunkSize: 3000})
		if err != nil {
			t.Fatal(err)
		}
		if rd.mem != nil || rd.Details()["compression"] != "gzip" {
			t.Errorf("%s: held in memory", name)
		}
		checkAgainst(t, rd, want)
		rd.Close()
	}
	// A temporary file that cannot be made (or a full disk) is named as such, with the file.
	path := filepath.Join("testdata", "sample.tgz")
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if _, err := Open(path, &ReaderOptions{MaxMemory: 4096}); err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("no temporary directory: %v; want an error naming %s and the temporary file", err, path)
	}
}
