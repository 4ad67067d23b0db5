package arrow

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestCheckSchemaMessageMutated changes bytes of a real schema message (the first message of
// an IPC stream) and decodes each change that CheckSchemaMessage lets through with arrow-go,
// as format/parquet decodes a Parquet file's stored Arrow schema: arrow-go trusts the message's
// vector lengths, and one that passed unchecked had it allocate 32 GiB for a 1 KB file (Go's
// fatal out of memory, which no recover catches). Work and memory stay bounded by the message.
func TestCheckSchemaMessageMutated(t *testing.T) {
	data, err := os.ReadFile("testdata/mlfeed-cbf-sequences.arrows")
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := readMessage(bytes.NewReader(data), int64(len(data)), 0, "s.arrows")
	if err != nil || !ok || m.kind != headerSchema {
		t.Fatalf("no schema message: %v", err)
	}
	msg := data[:m.size]
	if err := CheckSchemaMessage(msg); err != nil {
		t.Fatalf("the real message: %v", err)
	}
	rng := rand.New(rand.NewPCG(28, 6))
	passed := 0
	for k := 0; k < 3000; k++ {
		mut := bytes.Clone(msg)
		for j := 0; j < 1+rng.IntN(3); j++ {
			at := 8 + rng.IntN(len(mut)-8)
			switch rng.IntN(3) {
			case 0:
				mut[at] ^= byte(1 + rng.IntN(255))
			case 1:
				mut[at] = 0xff
			default:
				mut[at] = byte(rng.IntN(8))
			}
		}
		if CheckSchemaMessage(mut) != nil {
			continue
		}
		passed++
		func() {
			defer func() { recover() }()
			if r, err := ipc.NewReader(bytes.NewReader(mut)); err == nil {
				r.Release()
			}
		}()
	}
	t.Logf("%d of 3000 mutated messages passed the check and were decoded", passed)
}
