package tfrecord

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// decoded is a record as testdata/decode.py prints it.
type decoded struct {
	Features     map[string]decodedFeature   `json:"features"`
	FeatureLists map[string][]decodedFeature `json:"feature_lists"`
}

type decodedFeature struct {
	Kind   *string           `json:"kind"`
	Values []json.RawMessage `json:"values"`
}

// independent decodes a TFRecord file with testdata/decode.py.
func independent(t *testing.T, path, compression string) []decoded {
	t.Helper()
	py := testutil.Python(t)
	out, err := exec.Command(py, filepath.Join("testdata", "decode.py"), path, compression).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("decode.py %s: %v: %s", path, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var recs []decoded
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var d decoded
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, d)
	}
	return recs
}

// sampleJSON renders the values of one sample as decode.py does: numbers, or base64 strings.
func sampleJSON(t *testing.T, st *mlfeed.Stream, d *mlfeed.StreamData, s int64) []string {
	from, to := d.SampleRange(st, s)
	var out []string
	for k := from; k < to; k++ {
		switch st.Type {
		case mlfeed.Bytes:
			out = append(out, base64.StdEncoding.EncodeToString([]byte(d.Values.Strings[k])))
		case mlfeed.Float32:
			out = append(out, fmt.Sprint(d.Values.Float32s()[k]))
		case mlfeed.Int64:
			out = append(out, fmt.Sprint(d.Values.Int64s()[k]))
		default:
			t.Fatalf("stream %q has type %s", st.Name, st.Type)
		}
	}
	return out
}

// wantJSON renders values from decode.py for comparison with sampleJSON.
func wantJSON(t *testing.T, kind string, vals []json.RawMessage) []string {
	var out []string
	for _, v := range vals {
		switch kind {
		case "bytes_list":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		case "float_list":
			var f float64
			if err := json.Unmarshal(v, &f); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(float32(f)))
		default:
			out = append(out, string(v))
		}
	}
	return out
}

// checkAgainst compares what the Reader gives with the records decode.py decoded, by the
// mapping the package documents, and checks that every feature with a kind is a stream.
func checkAgainst(t *testing.T, rd *Reader, recs []decoded) {
	t.Helper()
	if rd.Records() != len(recs) {
		t.Fatalf("%d records, decode.py %d", rd.Records(), len(recs))
	}
	sc := rd.Schema()
	names := map[string]int{}
	for i, st := range sc.Streams {
		key := st.Name
		if rd.streams[i].list {
			key = "\x00" + key
		}
		names[key] = i
	}
	r := 0
	for ci := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), ci)
		if err != nil {
			t.Fatal(err)
		}
		lengths, _ := rd.SequenceLengths(ci)
		if !reflect.DeepEqual(lengths, mlfeed.LengthsOf(c)) {
			t.Fatalf("chunk %d: SequenceLengths %v, decoded %v", ci, lengths, mlfeed.LengthsOf(c))
		}
		for q := 0; q < c.Sequences; q, r = q+1, r+1 {
			rec := recs[r]
			for name, f := range rec.Features {
				if _, ok := names[name]; !ok && f.Kind != nil {
					t.Fatalf("record %d: feature %q (%s) is not a stream", r, name, *f.Kind)
				}
			}
			for name, fl := range rec.FeatureLists {
				for _, f := range fl {
					if _, ok := names["\x00"+name]; !ok && f.Kind != nil {
						t.Fatalf("record %d: feature list %q is not a stream", r, name)
					}
				}
			}
			for i := range sc.Streams {
				st, d, si := &sc.Streams[i], &c.Streams[i], rd.streams[i]
				var got, want [][]string
				for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
					got = append(got, sampleJSON(t, st, d, s))
				}
				kindOf := func(f decodedFeature) string {
					if f.Kind == nil {
						return ""
					}
					return *f.Kind
				}
				switch {
				case si.list:
					for _, f := range rec.FeatureLists[st.Name] {
						want = append(want, wantJSON(t, kindOf(f), f.Values))
					}
				case si.seq:
					if f, ok := rec.Features[st.Name]; ok {
						for _, v := range wantJSON(t, kindOf(f), f.Values) {
							want = append(want, []string{v})
						}
					}
				default:
					f := rec.Features[st.Name]
					want = [][]string{wantJSON(t, kindOf(f), f.Values)}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("record %d, stream %q: got %v, decode.py %v", r, st.Name, got, want)
				}
			}
		}
	}
}

func gunzipFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TensorFlow's (TFX's) own files read as the independent decoder reads them, compressed and
// plain, whole and in chunks of a few records.
func TestRealFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.tfrecord.gz"))
	if len(files) < 3 {
		t.Fatalf("testdata holds %d files", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			recs := independent(t, path, "gzip")
			for _, chunk := range []int64{0, 1000} {
				rd, err := Open(path, &ReaderOptions{ChunkSize: chunk})
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, rd, recs)
				if chunk > 0 && len(rd.Chunks()) < 2 {
					t.Errorf("chunk_size %d gave %d chunks", chunk, len(rd.Chunks()))
				}
				rd.Close()
			}
			plain := filepath.Join(t.TempDir(), "plain.tfrecord")
			if err := os.WriteFile(plain, gunzipFile(t, path), 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := Open(plain, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if rd.compress != CompressionNone {
				t.Errorf("plain file read as %s", rd.compress)
			}
			checkAgainst(t, rd, recs)
		})
	}
}

// The mapping rules on the real files: the penguin features are one float32 or int64 value
// in every record (dense, dim 1); the sequence file's context features are empty in some
// records (scalar sequences) and its feature list "s" holds bytes.
func TestRealSchemas(t *testing.T) {
	rd, err := Open(filepath.Join("testdata", "penguin_eval.tfrecord.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rd.Schema().Streams)
	rd.Close()
	want := "[body_mass_g dense float32 1 culmen_depth_mm dense float32 1 culmen_length_mm dense float32 1 flipper_length_mm dense float32 1 species dense int64 1]"
	if got != want {
		t.Errorf("penguin schema %s, want %s", got, want)
	}
	rd, err = Open(filepath.Join("testdata", "seq_eval.tfrecord.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.Mode() != RecordsSequenceExample {
		t.Errorf("mode %s", rd.Mode())
	}
	var kinds []string
	for i, st := range rd.Schema().Streams {
		kinds = append(kinds, fmt.Sprintf("%s list=%v seq=%v %s", st.Name, rd.streams[i].list, rd.streams[i].seq, st.Type))
	}
	if w := "[f list=false seq=true float32 i list=false seq=true int64 s list=true seq=false bytes]"; fmt.Sprint(kinds) != w {
		t.Errorf("sequence schema %v, want %s", kinds, w)
	}
}

// records=raw gives every record's bytes, and ZLIB files read like the others.
func TestRawAndZlib(t *testing.T) {
	plain := gunzipFile(t, filepath.Join("testdata", "penguin_eval.tfrecord.gz"))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	path := filepath.Join(t.TempDir(), "p.tfrecord")
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(path, &ReaderOptions{Records: RecordsRaw})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.compress != CompressionZlib {
		t.Errorf("zlib file read as %s", rd.compress)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every raw record is the data between its header and its CRC.
	off := 0
	for k, s := range c.Streams[0].Values.Strings {
		n := int(binary.LittleEndian.Uint64(plain[off:]))
		if s != string(plain[off+12:off+12+n]) {
			t.Fatalf("record %d differs", k)
		}
		off += 16 + n
	}
	if off != len(plain) || c.Sequences != 100 {
		t.Fatalf("%d sequences over %d of %d bytes", c.Sequences, off, len(plain))
	}
}

// frameRecord frames data as a TFRecord record.
func frameRecord(data []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, MaskedCRC(b[:8]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, MaskedCRC(data))
}

func openBytes(data []byte, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{FileName: "mem.tfrecord"}
	if opts != nil {
		o = *opts
		o.FileName = "mem.tfrecord"
	}
	return NewReader(bytes.NewReader(data), int64(len(data)), &o)
}

// Broken framing is an error naming the record and its start offset, wrapping the sentinel
// for the kind of damage, and a length field is never trusted for an allocation.
func TestBrokenFraming(t *testing.T) {
	plain := gunzipFile(t, filepath.Join("testdata", "penguin_eval.tfrecord.gz"))
	second := int64(16 + binary.LittleEndian.Uint64(plain))
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), plain...)) }
	cases := []struct {
		name string
		data []byte
		want error
		off  int64
	}{
		{"length CRC", mut(func(b []byte) []byte { b[second+8] ^= 1; return b }), mlfeed.ErrFormat, second},
		{"data CRC", mut(func(b []byte) []byte { b[second+20] ^= 1; return b }), mlfeed.ErrFormat, second},
		{"data CRC field", mut(func(b []byte) []byte { b[second-1] ^= 0x80; return b }), mlfeed.ErrFormat, 0},
		{"truncated data", plain[:len(plain)-3], mlfeed.ErrTruncated, int64(len(plain)) - 152},
		{"truncated header", append(append([]byte(nil), plain...), 1, 2, 3), mlfeed.ErrTruncated, int64(len(plain))},
		{"huge length", mut(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[second:], 1<<62)
			binary.LittleEndian.PutUint32(b[second+8:], MaskedCRC(b[second:second+8]))
			return b
		}), mlfeed.ErrTruncated, second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Through ReadAt (object storage) and through the mapped file.
			_, err := openBytes(tc.data, nil)
			path := filepath.Join(t.TempDir(), "broken.tfrecord")
			os.WriteFile(path, tc.data, 0o644)
			_, err2 := Open(path, nil)
			if fmt.Sprint(err) != strings.Replace(fmt.Sprint(err2), path, "mem.tfrecord", 1) {
				t.Errorf("read with ReadAt: %v\nmapped: %v", err, err2)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			var pe *mlfeed.PosError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v has no position", err)
			}
			if tc.name != "truncated data" && pe.Offset != tc.off {
				t.Errorf("offset %d, want %d (%v)", pe.Offset, tc.off, err)
			}
			if !strings.Contains(err.Error(), "record ") {
				t.Errorf("error %q does not name the record", err)
			}
		})
	}
	// A record larger than max_record is refused before its bytes are read.
	_, err := openBytes(plain, &ReaderOptions{MaxRecord: 100})
	if !errors.Is(err, mlfeed.ErrTooLarge) {
		t.Errorf("max_record: %v", err)
	}
}

// exampleBytes encodes a tf.train.Example of the given features by hand, for tests of the
// mapping rules.
func exampleBytes(feats ...[]byte) []byte {
	var fs []byte
	for _, f := range feats {
		fs = append(fs, f...)
	}
	return append(append([]byte{0x0a}, uvarint(len(fs))...), fs...)
}

func uvarint(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }

// entry encodes a map entry of Features: key and a Feature of kind k (1 bytes, 2 float,
// 3 int64) holding list body.
func entry(key string, k byte, body []byte) []byte {
	feat := []byte{}
	if k != 0 {
		feat = append(append([]byte{k<<3 | 2}, uvarint(len(body))...), body...)
	}
	e := append(append([]byte{0x0a}, uvarint(len(key))...), key...)
	e = append(append(append(e, 0x12), uvarint(len(feat))...), feat...)
	return append(append([]byte{0x0a}, uvarint(len(e))...), e...)
}

func floats(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return append(append([]byte{0x0a}, uvarint(len(b))...), b...)
}

func ints(v ...int64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.AppendUvarint(b, uint64(x))
	}
	return append(append([]byte{0x0a}, uvarint(len(b))...), b...)
}

func file(records ...[]byte) []byte {
	var b []byte
	for _, r := range records {
		b = append(b, frameRecord(r)...)
	}
	return b
}

// The mapping rules: dense when a numeric feature has one length in every record (dim 0 when
// always empty), a sequence of scalars when its length varies or a record lacks it, bytes
// always a sequence; a kind that changes is an error naming the record.
func TestMappingRules(t *testing.T) {
	data := file(
		exampleBytes(entry("dense", 2, floats(1, 2)), entry("vary", 3, ints(1)), entry("gap", 3, ints(5)), entry("empty", 2, nil), entry("b", 1, nil)),
		exampleBytes(entry("dense", 2, floats(3, 4)), entry("vary", 3, ints(-2, 3, 4)), entry("empty", 2, nil), entry("b", 1, append([]byte{0x0a, 1, 'x'}, 0x0a, 0))),
	)
	rd, err := openBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rd.Schema().Streams)
	want := "[b dense bytes 1 dense dense float32 2 empty dense float32 0 gap dense int64 1 vary dense int64 1]"
	if got != want {
		t.Fatalf("schema %s, want %s", got, want)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if l := mlfeed.LengthsOf(c); fmt.Sprint(l) != "[1 3]" {
		t.Errorf("lengths %v", l)
	}
	var js []string
	sc := rd.Schema()
	for q := 0; q < 2; q++ {
		var parts []string
		for i := range sc.Streams {
			d := &c.Streams[i]
			var samples [][]string
			for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
				samples = append(samples, sampleJSON(t, &sc.Streams[i], d, s))
			}
			parts = append(parts, fmt.Sprint(samples))
		}
		js = append(js, strings.Join(parts, " "))
	}
	if w := "[] [[1 2]] [[]] [[5]] [[1]]|[[eA==] []] [[3 4]] [[]] [] [[-2] [3] [4]]"; strings.Join(js, "|") != w {
		t.Errorf("values %s\nwant   %s", strings.Join(js, "|"), w)
	}

	bad := file(exampleBytes(entry("x", 2, floats(1))), exampleBytes(entry("x", 3, ints(1))))
	_, err = openBytes(bad, nil)
	if !errors.Is(err, mlfeed.ErrFormat) || !strings.Contains(err.Error(), "record 1") || !strings.Contains(err.Error(), "float_list in record 0") {
		t.Errorf("kind change: %v", err)
	}
	dup := file(exampleBytes(entry("x", 2, floats(1)), entry("x", 2, floats(2))))
	if _, err = openBytes(dup, nil); !errors.Is(err, mlfeed.ErrFormat) {
		t.Errorf("duplicate feature: %v", err)
	}
	garbage := file([]byte{0x0a, 0x7f, 1})
	if _, err = openBytes(garbage, nil); !errors.Is(err, mlfeed.ErrFormat) || !strings.Contains(err.Error(), "record 0") {
		t.Errorf("malformed protobuf: %v", err)
	}
}

// The index cache is written, used while fresh, and gives the same data.
func TestCacheIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.tfrecord")
	if err := os.WriteFile(path, gunzipFile(t, filepath.Join("testdata", "seq_eval.tfrecord.gz")), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &ReaderOptions{CacheIndex: true, ChunkSize: 50000}
	a, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := os.Stat(path + ".mlfeed-index"); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Details()["index_cache"] == nil {
		t.Fatal("the cache was not used")
	}
	if !reflect.DeepEqual(a.Schema(), b.Schema()) || !reflect.DeepEqual(a.Chunks(), b.Chunks()) || !reflect.DeepEqual(a.lengths, b.lengths) {
		t.Fatal("the cache gives another index")
	}
	if err := mlfeed.Diff(context.Background(), a, b); err != nil {
		t.Fatal(err)
	}
	// A damaged cache is ignored.
	cb, _ := os.ReadFile(path + ".mlfeed-index")
	cb[len(cb)-9] ^= 0xff
	os.WriteFile(path+".mlfeed-index", cb, 0o644)
	c, err := Open(path, &ReaderOptions{CacheIndex: true, Records: RecordsRaw})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Mode() != RecordsRaw {
		t.Fatalf("a cache of another mode was used")
	}
}

// Match knows TFRecord data by its first record header, plain or inside GZIP or ZLIB data (TFX
// names its files "data_tfrecord-00000-of-00001.gz"), and nothing else.
func TestMatch(t *testing.T) {
	gz, err := os.ReadFile(filepath.Join("testdata", "penguin_eval.tfrecord.gz"))
	if err != nil {
		t.Fatal(err)
	}
	plain := gunzipFile(t, filepath.Join("testdata", "penguin_eval.tfrecord.gz"))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	for name, head := range map[string][]byte{"gzip": gz, "plain": plain, "zlib": z.Bytes()} {
		if !Match(head[:min(512, len(head))]) {
			t.Errorf("%s: not matched", name)
		}
	}
	notTF := [][]byte{nil, []byte("hello world, this is text"), plain[1:], gz[:20]}
	var g bytes.Buffer
	gw := gzip.NewWriter(&g)
	gw.Write([]byte("0123456789abcdefghij"))
	gw.Close()
	notTF = append(notTF, g.Bytes())
	for i, head := range notTF {
		if Match(head) {
			t.Errorf("case %d matched", i)
		}
	}
}

// Compressed data larger than MaxMemory is decompressed into a temporary file and reads the
// same as from memory.
func TestCompressedBeyondMemory(t *testing.T) {
	path := filepath.Join("testdata", "penguin_train.tfrecord.gz")
	want, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	got, err := Open(path, &ReaderOptions{MaxMemory: 1024, ChunkSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if want.mem == nil || got.mem != nil {
		t.Fatalf("held in memory: %v with the default limit, %v with 1 KiB", want.mem != nil, got.mem != nil)
	}
	if err := mlfeed.Diff(context.Background(), want, got); err != nil {
		t.Error(err)
	}
	// A temporary file that cannot be made (or a full disk) is named as such, with the file.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if _, err := Open(path, &ReaderOptions{MaxMemory: 1024}); err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("no temporary directory: %v; want an error naming %s and the temporary file", err, path)
	}
}
