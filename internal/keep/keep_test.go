package keep

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestChunkOnce asks for every chunk from many goroutines at once: each is decoded once, every
// caller gets the same value, and exactly one call reports it fresh.
func TestChunkOnce(t *testing.T) {
	var reads [8]atomic.Int32
	k := New(8, func(_ context.Context, i int) (*int, error) {
		reads[i].Add(1)
		time.Sleep(time.Millisecond)
		v := i * 10
		return &v, nil
	})
	var fresh atomic.Int32
	var wg sync.WaitGroup
	got := make([][]*int, 16)
	for g := range got {
		got[g] = make([]*int, 8)
		wg.Go(func() {
			for i := range 8 {
				v, f, err := k.Chunk(context.Background(), (i+g)%8)
				if err != nil {
					t.Error(err)
					return
				}
				if f {
					fresh.Add(1)
				}
				got[g][(i+g)%8] = v
			}
		})
	}
	wg.Wait()
	for i := range reads {
		if n := reads[i].Load(); n != 1 {
			t.Errorf("chunk %d decoded %d times", i, n)
		}
		if v, ok := k.Kept(i); !ok || *v != i*10 {
			t.Errorf("chunk %d not kept", i)
		}
		for g := range got {
			if got[g][i] != got[0][i] {
				t.Fatalf("goroutine %d got another chunk %d", g, i)
			}
		}
	}
	if fresh.Load() != 8 {
		t.Errorf("%d fresh decodes reported for 8 chunks", fresh.Load())
	}
}

// TestChunkErrorNotKept checks that a failed decode is reported and not kept: the next call
// decodes again.
func TestChunkErrorNotKept(t *testing.T) {
	bad := errors.New("bad chunk")
	calls := 0
	k := New(1, func(context.Context, int) (int, error) {
		calls++
		if calls == 1 {
			return 0, bad
		}
		return 7, nil
	})
	if _, _, err := k.Chunk(context.Background(), 0); !errors.Is(err, bad) {
		t.Fatalf("err %v", err)
	}
	if _, ok := k.Kept(0); ok {
		t.Fatal("a failed decode was kept")
	}
	v, fresh, err := k.Chunk(context.Background(), 0)
	if err != nil || v != 7 || !fresh || calls != 2 {
		t.Fatalf("retry: %v %v %v after %d calls", v, fresh, err, calls)
	}
}

// TestChunkWaitCancelled checks that a caller waiting for another's decode stops when its ctx
// ends, and that the decode is kept for later callers.
func TestChunkWaitCancelled(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	k := New(1, func(context.Context, int) (string, error) {
		close(started)
		<-release
		return "x", nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if v, _, err := k.Chunk(context.Background(), 0); err != nil || v != "x" {
			t.Errorf("decoder got %q, %v", v, err)
		}
	}()
	<-started
	if _, ok := k.Kept(0); ok {
		t.Fatal("a chunk being decoded reported kept")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := k.Chunk(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting with an ended ctx: %v", err)
	}
	close(release)
	<-done
	if v, fresh, err := k.Chunk(context.Background(), 0); err != nil || v != "x" || fresh {
		t.Fatalf("after the decode: %q %v %v", v, fresh, err)
	}
}
