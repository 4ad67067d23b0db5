package convert

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writebackEvery is how many bytes written make a writeback start.
const writebackEvery = 8 << 20

// writeback writes to a regular file and, every writebackEvery bytes, has the kernel start
// writing the new pages to disk (sync_file_range with SYNC_FILE_RANGE_WRITE), then waits for
// the writeback it started the time before: write-behind. The disk works while the conversion
// goes on, the fsync that commits the file (package atomicfile) waits for the last few MB only
// (converting 200 MB of CTF into 100 MB of CBF, that fsync waited about 50 ms, a tenth of the
// whole), and the output's dirty pages and pages under writeback stay under three times
// writebackEvery, whatever the disk's speed. Without the wait, a conversion faster than its
// disk filled the page cache with pages under writeback: in a memory cgroup v1, whose limit
// counts them and whose reclaim cannot write them, a 64 MiB limit got convert killed.
type writeback struct {
	f      *os.File
	fd     int
	off    int64 // bytes written
	done   int64 // bytes whose writeback was started
	waited int64 // bytes whose writeback was waited for
}

// withWriteback returns the writer for f, which a format writes front to back.
func withWriteback(f *os.File) io.Writer {
	return &writeback{f: f, fd: int(f.Fd())}
}

// Fd returns the file's descriptor, for writers that preallocate the file's blocks (npy).
func (w *writeback) Fd() uintptr { return w.f.Fd() }

func (w *writeback) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.off += int64(n)
	if w.off-w.done >= writebackEvery {
		// Hints: an error here would come again from the fsync, which reports it.
		_ = unix.SyncFileRange(w.fd, w.done, w.off-w.done, unix.SYNC_FILE_RANGE_WRITE)
		if w.done > w.waited {
			_ = unix.SyncFileRange(w.fd, w.waited, w.done-w.waited,
				unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
			w.waited = w.done
		}
		w.done = w.off
	}
	return n, err
}
