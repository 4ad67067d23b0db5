package npy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// numpyCases writes one .npy file per case into a directory with numpy, and beside each:
// NAME.raw, the values in C order as little-endian bytes (or NAME.json for strings), and
// NAME.ref.npy, what numpy.save writes for the same values little-endian and C-ordered, with a
// 0-d array as one record (what mlfeed's writer must reproduce byte for byte). float16 is
// read as float32: its raw and ref files hold numpy's astype(float32).
const numpyCases = `
import json, sys
import numpy as np
from numpy.lib import format as fmt
d = sys.argv[1]
rng = np.random.default_rng(7)
cases = {}
for t in ['b1', 'i1', 'u1', 'i2', 'u2', 'i4', 'u4', 'i8', 'u8', 'f2', 'f4', 'f8', 'c8', 'c16']:
    for shape in [(5,), (3, 4), (2, 3, 4), (0,), (4, 0), (), (1, 1), (3, 1)]:
        a = (rng.integers(-100, 100, shape) * 1.5).astype(t) if t != 'b1' else rng.integers(0, 2, shape).astype(t)
        cases['%s_%s' % (t, 'x'.join(map(str, shape)) or 'scalar')] = (a, None)
for t in ['>i2', '>u4', '>i8', '>f2', '>f4', '>f8', '>c8', '>c16']:
    cases['be_' + t[1:]] = ((np.arange(12).reshape(3, 4) * 3 - 7).astype(t), None)
cases['fortran_f4_3x4'] = (np.asfortranarray(np.arange(12, dtype='<f4').reshape(3, 4)), None)
cases['fortran_i2_2x3x4'] = (np.asfortranarray(np.arange(24, dtype='<i2').reshape(2, 3, 4)), None)
cases['fortran_be_f8_4x2'] = (np.asfortranarray((np.arange(8).reshape(4, 2) / 3).astype('>f8')), None)
cases['fortran_be_f2_4x2'] = (np.asfortranarray((np.arange(8).reshape(4, 2) / 3).astype('>f2')), None)
# float16 NaNs with payloads, infinities, subnormals, signed zeros
cases['f2_special'] = (np.array([0x7e01, 0xfc01, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x8000, 0x7bff], dtype='<u2').view('<f2'), None)
cases['v2_f8_3x2'] = (np.arange(6, dtype='<f8').reshape(3, 2) / 7, (2, 0))
cases['v3_i4_5'] = (np.arange(5, dtype='<i4'), (3, 0))
cases['str_U5'] = (np.array(['a', 'héllo', '', 'x y', '日本']), None)
cases['str_be_U3'] = (np.array(['ab', 'c', 'xyz'], dtype='>U3'), None)
cases['big_first_dim'] = (np.zeros((123456, 0), dtype='<f4'), None)
for name, (a, version) in cases.items():
    assert name[:3] != 'be_' or a.dtype.byteorder == '>', name
    with open('%s/%s.npy' % (d, name), 'wb') as f:
        if version is None:
            np.save(f, a)
        else:
            fmt.write_array(f, a, version=version)
    le = np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<')))
    if a.dtype.kind == 'f' and a.dtype.itemsize == 2:
        le = le.astype('<f4')
    if le.ndim == 0:
        le = le.reshape(1)
    if a.dtype.kind == 'U':
        json.dump(a.tolist(), open('%s/%s.json' % (d, name), 'w'))
    else:
        open('%s/%s.raw' % (d, name), 'wb').write(le.tobytes())
    np.save('%s/%s.ref.npy' % (d, name), le)
n = 6
arrs = dict(x=rng.standard_normal((n, 3)).astype('<f4'), y=np.arange(n, dtype='<i8'), s=np.array(['a', 'bb', 'ccc', '', 'é', 'z']), m=rng.integers(0, 2, (n, 2, 2)).astype('?'))
np.savez(d + '/stored.npz', **arrs)
np.savez_compressed(d + '/deflated.npz', **arrs)
np.savez(d + '/positional.npz', np.arange(4), np.ones((4, 2)))
np.savez(d + '/mismatch.npz', a=np.arange(3), b=np.ones((4, 2)))
for k, a in arrs.items():
    if a.dtype.kind == 'U':
        json.dump(a.tolist(), open('%s/npz_%s.json' % (d, k), 'w'))
    else:
        open('%s/npz_%s.raw' % (d, k), 'wb').write(a.tobytes())
# float16 members, big-endian and Fortran-ordered, stored and deflated; half_NAME.raw holds
# numpy's astype('<f4') of each
halves = dict(h=rng.standard_normal((n, 2)).astype('>f2'), g=np.asfortranarray(rng.standard_normal((n, 3, 2)).astype('<f2')))
np.savez(d + '/half.npz', **halves)
np.savez_compressed(d + '/half_deflated.npz', **halves)
for k, a in halves.items():
    open('%s/half_%s.raw' % (d, k), 'wb').write(np.ascontiguousarray(a.astype('<f4')).tobytes())
print(json.dumps(sorted(cases)))
`

// numpyDir runs numpyCases in a fresh directory and returns it with the case names.
func numpyDir(t *testing.T) (string, []string) {
	t.Helper()
	py := testutil.Python(t, "numpy")
	d := t.TempDir()
	out, err := exec.Command(py, "-c", numpyCases, d).Output()
	if err != nil {
		t.Fatalf("numpy: %v", err)
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		t.Fatal(err)
	}
	return d, names
}

// readAll returns the chunks of a source joined per stream: values as bytes (strings as a
// list) and the total record count.
func readAll(t *testing.T, src mlfeed.Source) ([]mlfeed.Buffer, int) {
	t.Helper()
	sc := src.Schema()
	out := make([]mlfeed.Buffer, len(sc.Streams))
	for k := range out {
		out[k] = mlfeed.Buffer{Type: sc.Streams[k].Type, Bytes: []byte{}}
	}
	n := 0
	var prev *mlfeed.Chunk
	for i := range src.Chunks() {
		c, err := src.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(&sc); err != nil {
			t.Fatal(err)
		}
		for k := range out {
			out[k].Append(c.Streams[k].Values)
		}
		n += c.Sequences
		prev = c
	}
	return out, n
}

// TestNumpyFloat16: float16 members of archives (big-endian, Fortran order, stored and
// deflated) read as numpy's astype(float32), announced in Details; written back, they are
// float32 members numpy reads as the same values.
func TestNumpyFloat16(t *testing.T) {
	d, _ := numpyDir(t)
	for _, name := range []string{"half.npz", "half_deflated.npz"} {
		rd, err := npy.Open(filepath.Join(d, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		sc := rd.Schema()
		if got := rd.Details()["float16_read_as_float32"]; !reflect.DeepEqual(got, []string{"h", "g"}) {
			t.Errorf("%s: float16_read_as_float32 %v", name, got)
		}
		got, _ := readAll(t, rd)
		for k, st := range sc.Streams {
			want, _ := os.ReadFile(filepath.Join(d, "half_"+st.Name+".raw"))
			if st.Type != mlfeed.Float32 || !bytes.Equal(got[k].Bytes, want) {
				t.Errorf("%s: %s (%v) differs from numpy's astype(float32)", name, st.Name, st.Type)
			}
		}
		writeBack(t, filepath.Join(d, name), rd, &npy.WriterOptions{Archive: true}, `
for k in a.keys():
    assert b[k].dtype == np.float32 and (a[k].astype(np.float32) == b[k]).all(), k
`)
	}
}

// writeBack writes the archive rd reads (numpy wrote it at name) into a new file with opts,
// closes rd, runs check (Python, with numpy as np, numpy's archive loaded as a and the new one
// as b) and returns the new file's bytes.
func writeBack(t *testing.T, name string, rd *npy.Reader, opts *npy.WriterOptions, check string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(name))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w, err := npy.NewWriter(f, rd.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteAll(t, rd, w)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rd.Close()
	script := "import sys, numpy as np\na, b = np.load(sys.argv[1]), np.load(sys.argv[2])\n" + check
	if msg, err := exec.Command(testutil.Python(t, "numpy"), "-c", script, name, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: numpy reads other arrays back: %v\n%s", filepath.Base(name), err, msg)
	}
	mine, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return mine
}

// TestNumpyFiles reads every file numpy wrote, compares the values with numpy's, and writes
// them back: the bytes must equal numpy.save's, with the record count known in advance
// (written straight through) and unknown (spooled).
func TestNumpyFiles(t *testing.T) {
	d, names := numpyDir(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, opts := range []*npy.ReaderOptions{nil, {NoMmap: true}, {ChunkSize: 7}} {
				rd, err := npy.Open(filepath.Join(d, name+".npy"), opts)
				if err != nil {
					t.Fatal(err)
				}
				got, n := readAll(t, rd)
				if js, err := os.ReadFile(filepath.Join(d, name+".json")); err == nil {
					var want []string
					json.Unmarshal(js, &want)
					if !reflect.DeepEqual(got[0].Strings, want) {
						t.Fatalf("strings %q, numpy %q", got[0].Strings, want)
					}
				} else {
					want, err := os.ReadFile(filepath.Join(d, name+".raw"))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got[0].Bytes, want) {
						t.Fatalf("values differ from numpy's at byte %d", testutil.FirstDiff(got[0].Bytes, want))
					}
				}
				ref, _ := os.ReadFile(filepath.Join(d, name+".ref.npy"))
				for _, records := range []int64{int64(n), 0} {
					var buf bytes.Buffer
					w, err := npy.NewWriter(&buf, rd.Schema(), &npy.WriterOptions{Records: records})
					if err != nil {
						t.Fatal(err)
					}
					testutil.WriteAll(t, rd, w)
					if !bytes.Equal(buf.Bytes(), ref) {
						t.Fatalf("records %d: written bytes differ from numpy.save's at byte %d:\n%q\n%q", records,
							testutil.FirstDiff(buf.Bytes(), ref), head(buf.Bytes()), head(ref))
					}
				}
				rd.Close()
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 140)] }

// TestNumpyArchives reads numpy.savez and savez_compressed archives, and writes them back: the
// stored archive byte for byte, the compressed one as numpy reads it to equal arrays.
func TestNumpyArchives(t *testing.T) {
	d, _ := numpyDir(t)
	for _, name := range []string{"stored.npz", "deflated.npz"} {
		rd, err := npy.Open(filepath.Join(d, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		sc := rd.Schema()
		var names []string
		for _, st := range sc.Streams {
			names = append(names, st.Name)
		}
		if strings.Join(names, ",") != "x,y,s,m" {
			t.Fatalf("%s: streams %v", name, names)
		}
		if sc.Streams[0].Dim != 3 || !reflect.DeepEqual(sc.Streams[3].Shape, []int{2, 2}) || sc.Streams[3].Type != mlfeed.Bool {
			t.Fatalf("%s: schema %v", name, sc.Streams)
		}
		got, n := readAll(t, rd)
		if n != 6 {
			t.Fatalf("%s: %d records", name, n)
		}
		for k, st := range sc.Streams {
			if js, err := os.ReadFile(filepath.Join(d, "npz_"+st.Name+".json")); err == nil {
				var want []string
				json.Unmarshal(js, &want)
				if !reflect.DeepEqual(got[k].Strings, want) {
					t.Fatalf("%s: %s: %q, numpy %q", name, st.Name, got[k].Strings, want)
				}
				continue
			}
			want, _ := os.ReadFile(filepath.Join(d, "npz_"+st.Name+".raw"))
			if !bytes.Equal(got[k].Bytes, want) {
				t.Fatalf("%s: %s differs from numpy's", name, st.Name)
			}
		}
		mine := writeBack(t, filepath.Join(d, name), rd, &npy.WriterOptions{Archive: true, Compress: name == "deflated.npz"}, `
assert list(a.keys()) == list(b.keys()), (list(a.keys()), list(b.keys()))
for k in a.keys():
    assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and (a[k] == b[k]).all(), k
`)
		theirs, _ := os.ReadFile(filepath.Join(d, name))
		if name == "stored.npz" && !bytes.Equal(mine, theirs) {
			t.Fatalf("stored archive differs from numpy.savez's at byte %d", testutil.FirstDiff(mine, theirs))
		}
	}
	rd, err := npy.Open(filepath.Join(d, "positional.npz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if sc := rd.Schema(); sc.Streams[0].Name != "arr_0" || sc.Streams[1].Name != "arr_1" {
		t.Fatalf("positional names: %v", sc.Streams)
	}
	if _, err := npy.Open(filepath.Join(d, "mismatch.npz"), nil); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "first dimension") {
		t.Fatalf("arrays of different lengths: %v", err)
	}
}
