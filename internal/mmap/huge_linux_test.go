package mmap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestMapAdvisesHuge: a file's mapping carries MADV_HUGEPAGE (the "hg" flag of its line in
// /proc/self/smaps), where the kernel has transparent huge pages.
func TestMapAdvisesHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages:", err)
	}
	name := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(name, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Map(f, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&r.Bytes()[0])))
	var in bool
	for _, line := range strings.Split(string(smaps), "\n") {
		if strings.HasPrefix(line, start) {
			in = true
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line+" ", " hg ") {
				t.Errorf("the mapping's flags lack hg (MADV_HUGEPAGE): %s", line)
			}
			return
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
}
