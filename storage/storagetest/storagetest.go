// Package storagetest is the conformance suite every driver of package storage passes: a
// driver's test starts its service (or an emulator) and calls Run with a prefix URL where it
// may write.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed/storage"
)

// Run checks the driver behind prefix (a URL ending in "/", under which the test may create
// and delete objects): uploads appear whole only on Commit, aborted ones not at all; ranged
// reads of every size and place, through storage.Object, return the object's bytes; sizes
// and listings are right; missing objects are os.ErrNotExist.
func Run(t *testing.T, prefix string) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 3*storage.BlockSize+4321)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	big := prefix + "big.bin"

	t.Run("Upload", func(t *testing.T) {
		w, err := storage.Create(ctx, big)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		for off := 0; off < len(data); off += 100000 {
			if _, err := w.Write(data[off:min(off+100000, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := storage.Stat(ctx, big); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the object is visible before Commit: %v", err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		a, err := storage.Stat(ctx, big)
		if err != nil || a.Size != int64(len(data)) {
			t.Fatalf("Stat after Commit: %+v, %v", a, err)
		}
	})

	t.Run("Abort", func(t *testing.T) {
		w, err := storage.Create(ctx, prefix+"aborted.bin")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:1000]); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		if _, err := storage.Stat(ctx, prefix+"aborted.bin"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an aborted upload left an object: %v", err)
		}
	})

	t.Run("ReadAt", func(t *testing.T) {
		o, err := storage.Open(ctx, big)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		size := int64(len(data))
		if o.Size() != size {
			t.Fatalf("size %d, want %d", o.Size(), size)
		}
		for _, r := range [][2]int64{{0, 16}, {size - 8, 8}, {storage.BlockSize - 10, 20}, {7, 2*storage.BlockSize + 5}, {size - 3, 3}, {12345, storage.BlockSize}} {
			p := make([]byte, r[1])
			if n, err := o.ReadAt(p, r[0]); n != len(p) || err != nil || !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
				t.Fatalf("ReadAt(%d bytes at %d): %d, %v", r[1], r[0], n, err)
			}
		}
		p := make([]byte, 10)
		if n, err := o.ReadAt(p, size-4); n != 4 || err != io.EOF {
			t.Errorf("ReadAt past the end: %d, %v", n, err)
		}
	})

	t.Run("Small", func(t *testing.T) {
		for _, n := range []int{0, 1, 1000} {
			name := prefix + "small.bin"
			if err := storage.WriteFile(ctx, name, data[:n]); err != nil {
				t.Fatal(err)
			}
			got, err := storage.ReadFile(ctx, name, 1<<20)
			if err != nil || !bytes.Equal(got, data[:n]) {
				t.Errorf("%d bytes: read %d, %v", n, len(got), err)
			}
		}
	})

	t.Run("List", func(t *testing.T) {
		if err := storage.WriteFile(ctx, prefix+"sub/deeper.bin", data[:10]); err != nil {
			t.Fatal(err)
		}
		got, err := storage.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{big, prefix + "small.bin"} {
			if !slices.Contains(got, want) {
				t.Errorf("List(%s) = %q: %s missing", prefix, got, want)
			}
		}
		if slices.Contains(got, prefix+"sub/deeper.bin") {
			t.Errorf("List(%s) = %q: lists an object of a deeper prefix", prefix, got)
		}
	})

	t.Run("Missing", func(t *testing.T) {
		if _, err := storage.Open(ctx, prefix+"missing.bin"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open of a missing object: %v", err)
		}
		if err := storage.Delete(ctx, big); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.Stat(ctx, big); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat after Delete: %v", err)
		}
	})
}
