//go:build unix

package npy

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// writeBomb writes an .npz whose one deflated member x.npy is a float32 array of the given
// shape, all zeros: a few hundred kilobytes that inflate to the array's size.
func writeBomb(tb testing.TB, path string, shape ...int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "x.npy", Method: zip.Deflate})
	if err != nil {
		tb.Fatal(err)
	}
	dims := make([]string, len(shape))
	n := 4
	for k, d := range shape {
		dims[k] = fmt.Sprint(d)
		n *= d
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s,), }", strings.Join(dims, ", "))
	pad := 64 - (10+len(dict)+1)%64
	hdr := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)+pad+1), byte((len(dict)+pad+1)>>8))
	hdr = append(append(append(hdr, dict...), strings.Repeat(" ", pad)...), '\n')
	if _, err := w.Write(hdr); err != nil {
		tb.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for ; n > 0; n -= len(zeros) {
		if _, err := w.Write(zeros[:min(n, len(zeros))]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
}

// bombRecords is the record count of the bomb: 256 Mi float32 zeros, 1 GiB inflated.
const bombRecords = 256 << 20

// TestDeflateBombMemory reads every chunk of an .npz whose 350 KB member inflates to 1 GiB,
// ahead on four threads as validate does, under a 64 MiB budget, in a child process: its peak
// memory stays near the budget, not the member's size (it was the whole member before).
func TestDeflateBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 1 GiB")
	}
	if testutil.IsChild(t) {
		path := os.Getenv("NPZ_BOMB")
		s := sched.New(4, 64<<20)
		rd, err := Open(path, &ReaderOptions{Memory: s.Memory()})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		if _, err := rd.ReadChunk(context.Background(), 0); err != nil { // cat -n 1
			t.Fatal(err)
		}
		order := make([]int, len(rd.Chunks()))
		for i := range order {
			order[i] = i
		}
		ra := s.ReadAhead(sched.WithContext(context.Background(), s), rd, order, &sched.ReadAheadOptions{Recycle: true})
		defer ra.Close()
		n := 0
		for ra.Next() {
			n += ra.Chunk().Streams[0].Values.Len()
		}
		if err := ra.Err(); err != nil {
			t.Fatal(err)
		}
		if n != bombRecords {
			t.Fatalf("read %d values, want %d", n, bombRecords)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "bomb.npz")
	writeBomb(t, path, bombRecords)
	st, _ := os.Stat(path)
	out, rss, err := testutil.RunChild(t, "NPZ_BOMB="+path)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%d-byte file, %d bytes inflated: peak RSS %.1f MiB", st.Size(), bombRecords*4, float64(rss)/(1<<20))
	if rss > 200<<20 { // 1081 MiB when the member was inflated whole
		t.Errorf("peak RSS %.1f MiB reading a member of 1 GiB under a 64 MiB budget; want under 200 MiB", float64(rss)/(1<<20))
	}
}

// TestDeflateBombRefused: a member whose records do not fit a quarter of the budget is
// refused at open, before it is inflated, with ErrTooLarge naming its size and --memory.
func TestDeflateBombRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.npz")
	writeBomb(t, path, 2, 4<<20) // two records of 16 MiB
	_, err := Open(path, &ReaderOptions{Memory: 32 << 20})
	if !errors.Is(err, mlfeed.ErrTooLarge) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	for _, want := range []string{path, "x.npy", "33554560 bytes", "--memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	rd, err := Open(path, &ReaderOptions{Memory: 256 << 20})
	if err != nil {
		t.Fatalf("under a budget that fits: %v", err)
	}
	rd.Close()
}
