package shard

import (
	"bytes"
	"os"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// FuzzManifest: a manifest read from a data set's directory is untrusted input. Decoding never
// panics, and one that decodes is consistent: its shards stay inside the data set and their
// chunk tables sum to what they claim.
func FuzzManifest(f *testing.F) {
	m := &Manifest{Version: Version, Format: "cbf", Schema: mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 3}}},
		Shards:    []Entry{{Path: "part-00000.cbf", Sequences: 5, Samples: 7, Chunks: 2, ChunkTable: [][2]int64{{2, 3}, {3, 4}}, Bytes: 10, SHA256: "00"}},
		Sequences: 5, Samples: 7}
	b, err := m.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	m.Task = &Task{Index: 1, Count: 3}
	b, _ = m.Marshal()
	f.Add(b)
	f.Add([]byte(`{"mlfeed_manifest": 1, "format": "x", "shards": [{"path": "../a"}]}`))
	if b, err = testManifest(manifestSchema()).Marshal(); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	if b, err = os.ReadFile("testdata/v1/mlfeed.json"); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest("fuzz.json", bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := m.check(); err != nil {
			t.Fatalf("decoded manifest fails its own check: %v", err)
		}
		for _, e := range m.Shards {
			if len(e.Infos()) != e.Chunks {
				t.Fatalf("%s: %d chunk infos for %d chunks", e.Path, len(e.Infos()), e.Chunks)
			}
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeManifest("again.json", bytes.NewReader(out)); err != nil {
			t.Fatalf("re-encoded manifest does not decode: %v", err)
		}
	})
}
