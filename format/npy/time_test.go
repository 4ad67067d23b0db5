package npy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// numpyTimes writes time.npz, numpy's datetime64 and timedelta64 arrays of many units (with
// multipliers, calendar units, big-endian, Fortran order, the unit mlfeed writes), and beside
// it NAME.ticks, each array's values as numpy converts them to 100-ns ticks (DateTime from
// 0001-01-01), little-endian int64 in C order.
const numpyTimes = `
import sys
import numpy as np
d = sys.argv[1]
arrs = {
    'ns': np.array(['2024-01-02T03:04:05.1234567', '1970-01-01', '1677-09-22T00:12:43.145224200'], 'M8[ns]'),
    'us_be': np.array(['0001-01-01', '9999-12-31T23:59:59.999999', '1969-12-31T23:59:59.999999'], '>M8[us]'),
    'day': np.array(['0001-01-01', '2024-02-29', '9999-12-31'], 'M8[D]'),
    'year': np.array(['0001', '1970', '9999'], 'M8[Y]'),
    'month': np.array(['0001-01', '1969-12', '2024-02'], 'M8[M]'),
    'five_s': np.array(['2024-01-02T03:04:05', '1970-01-01', '1960-01-01'], 'M8[5s]'),
    'week': np.array(['1970-01-01', '2024-01-04', '1900-01-04'], 'M8[W]'),
    'fortran': np.asfortranarray(np.array([['2001-01-01', '2002-02-02'], ['2003-03-03', '2004-04-04'], ['2005-05-05', '2006-06-06']], 'M8[h]')),
    'ms': np.array([-5, 0, 86400000], 'm8[ms]'),
    'ticks': np.array([-1, 7, 123456789], 'm8[100ns]'),
    'ps': np.array([100000, -300000, 0], 'm8[ps]'),
}
np.savez(d + '/time.npz', **arrs)
np.savez_compressed(d + '/time_deflated.npz', **arrs)
# numpy converts datetime64[100ns] to ns and to years and months through nanoseconds, which
# overflow outside 1678-2261: the ticks are computed through microseconds instead
year1 = np.datetime64('0001-01-01', 'us').astype('i8') * 10
for k, a in arrs.items():
    raw = a.astype(a.dtype.newbyteorder('<')).view('<i8')
    if k == 'ns':
        t = raw // 100 - year1
    elif a.dtype.kind == 'M':
        t = a.astype('M8[us]').view('<i8') * 10 - year1
    elif k == 'ps':
        t = raw // 100000
    elif k == 'ticks':
        t = raw
    else:
        t = a.astype('m8[us]').view('<i8') * 10
    open('%s/%s.ticks' % (d, k), 'wb').write(np.ascontiguousarray(t).tobytes())
`

// TestNumpyTimes reads numpy's datetime64 and timedelta64 arrays as DateTime and Duration
// ticks equal to numpy's own conversion, and writes them back as datetime64[100ns] and
// timedelta64[100ns], which numpy reads as the same times.
func TestNumpyTimes(t *testing.T) {
	py := testutil.Python(t, "numpy")
	d := t.TempDir()
	if out, err := exec.Command(py, "-c", numpyTimes, d).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for _, name := range []string{"time.npz", "time_deflated.npz"} {
		rd, err := npy.Open(filepath.Join(d, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, n := readAll(t, rd)
		if n != 3 {
			t.Errorf("%s: %d records", name, n)
		}
		for k, st := range rd.Schema().Streams {
			want, err := os.ReadFile(filepath.Join(d, st.Name+".ticks"))
			if err != nil {
				t.Fatal(err)
			}
			wantType := map[bool]mlfeed.ElemType{true: mlfeed.Duration, false: mlfeed.DateTime}[st.Name == "ms" || st.Name == "ticks" || st.Name == "ps"]
			if st.Type != wantType || !bytes.Equal(got[k].Bytes, want) {
				t.Errorf("%s: %s: %s %v, want %s %v", name, st.Name, st.Type, got[k].Bytes, wantType, want)
			}
		}
		writeBack(t, filepath.Join(d, name), rd, &npy.WriterOptions{Archive: true}, `
import os
year1 = np.datetime64('0001-01-01', 'us').astype('i8') * 10
for k in a.keys():
    kind = a[k].dtype.kind
    assert b[k].dtype == np.dtype('<' + kind + '8[100ns]') and b[k].shape == a[k].shape, (k, b[k].dtype)
    t = np.fromfile(os.path.join(os.path.dirname(sys.argv[1]), k + '.ticks'), '<i8').reshape(a[k].shape)
    assert (b[k].view('<i8') == (t + year1 if kind == 'M' else t)).all(), k
    if kind == 'M':  # numpy's own conversion to microseconds agrees
        assert (b[k].astype('M8[us]') == a[k].astype('M8[us]')).all(), k
`)
	}
}
