package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteback writes more than three times writebackEvery in uneven pieces and checks that every
// byte arrives, that writeback was started for all but less than writebackEvery bytes and
// waited for up to where the last one started.
func TestWriteback(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := make([]byte, 3*writebackEvery+12345)
	for i := range want {
		want[i] = byte(i * 7)
	}
	w := withWriteback(f).(*writeback)
	for rest := want; len(rest) > 0; {
		n := min(len(rest), 3<<20+17)
		if k, err := w.Write(rest[:n]); k != n || err != nil {
			t.Fatalf("Write: %d, %v", k, err)
		}
		rest = rest[n:]
	}
	if w.done < writebackEvery || w.done > w.off || w.off-w.done >= writebackEvery {
		t.Errorf("writeback started up to %d of %d bytes", w.done, w.off)
	}
	if w.waited < writebackEvery || w.waited >= w.done || w.done-w.waited > 2*writebackEvery {
		t.Errorf("writeback waited for up to %d bytes, started up to %d", w.waited, w.done)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the file differs from what was written")
	}
}
