package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// manifestSchema has every field a manifest's streams carry.
func manifestSchema() mlfeed.Schema {
	slots := mlfeed.Annotation{Name: "SlotNames", Desc: mlfeed.Stream{Type: mlfeed.String, Dim: 2},
		Data: mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"a", "b"}}}}
	scale := mlfeed.Annotation{Name: "Scale", Desc: mlfeed.Stream{Type: mlfeed.Float32, Dim: 1, Shape: []int{}},
		Data: mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.Float32, Bytes: []byte{0, 0, 0xc0, 0x7f}}}}
	return mlfeed.Schema{HasIDs: true, Streams: []mlfeed.Stream{
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 784, Shape: []int{28, 28}, Metadata: []mlfeed.Annotation{slots, scale}},
		{Name: "label", Alias: "l", Type: mlfeed.Uint32, Dim: 1, Shape: []int{}, KeyCount: 10, DefinesMBSize: true},
		{Name: "words", Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: 50000},
		{Name: "tokens", Type: mlfeed.Int64},
	}}
}

func testManifest(s mlfeed.Schema) *Manifest {
	return &Manifest{Version: Version, Format: "cbf", Schema: s, Sequences: 5, Samples: 7,
		Shards: []Entry{{Path: "part-00000.cbf", Sequences: 5, Samples: 7, Chunks: 2, ChunkTable: [][2]int64{{2, 3}, {3, 4}}, Bytes: 10, SHA256: "00"}}}
}

// TestManifestForm: a manifest holds the schema in its documented form (docs/scale.md), not
// Go's field names, and reads back as the same schema.
func TestManifestForm(t *testing.T) {
	m := testManifest(manifestSchema())
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["schema"]; ok {
		t.Errorf("manifest still writes Go's schema:\n%s", b)
	}
	if doc["mlfeed_manifest"] != float64(2) || doc["has_ids"] != true {
		t.Errorf("mlfeed_manifest %v, has_ids %v", doc["mlfeed_manifest"], doc["has_ids"])
	}
	// Every key is snake_case.
	for _, k := range regexp.MustCompile(`"([^"]+)":`).FindAllStringSubmatch(string(b), -1) {
		if strings.ToLower(k[1]) != k[1] {
			t.Errorf("key %q in the manifest", k[1])
		}
	}
	label := doc["streams"].([]any)[1].(map[string]any)
	want := map[string]any{"name": "label", "alias": "l", "storage": "dense", "type": "uint32", "dim": float64(1),
		"shape": []any{}, "key_count": float64(10), "defines_mb_size": true}
	if !reflect.DeepEqual(label, want) {
		t.Errorf("stream label: %v, want %v", label, want)
	}
	words := doc["streams"].([]any)[2].(map[string]any)
	if _, ok := words["shape"]; ok || words["storage"] != "sparse" {
		t.Errorf("stream words: %v", words)
	}
	got, err := DecodeManifest("m.json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Schema, m.Schema) {
		t.Errorf("schema read back:\n%+v\nwant\n%+v", got.Schema, m.Schema)
	}
	if !SameSchema(got.Schema, m.Schema) {
		t.Error("SameSchema: the schema read back differs")
	}
	again, _ := got.Marshal()
	if !bytes.Equal(again, b) {
		t.Errorf("re-encoded manifest differs:\n%s\n%s", again, b)
	}
}

// TestManifestBadSchema: a manifest's streams are checked, and a manifest that names a field
// not documented is an error.
func TestManifestBadSchema(t *testing.T) {
	m := testManifest(manifestSchema())
	b, _ := m.Marshal()
	for _, c := range []struct{ from, to string }{
		{`"storage": "sparse"`, `"storage": "ragged"`},
		{`"type": "float64"`, `"type": "float128"`},
		{`"has_ids": true`, `"has_ids": true, "streams_total": 4`},
		{`"dim": 784`, `"dim": 785`},
		{`"name": "label"`, `"name": "image"`},
		{`"bytes": "AADAfw=="`, `"bytes": "AADA"`},
		{`"mlfeed_manifest": 2`, `"mlfeed_manifest": 2, "schema": {}`},
	} {
		bad := bytes.Replace(b, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, b) {
			t.Fatalf("%s not in the manifest:\n%s", c.from, b)
		}
		_, err := DecodeManifest("bad.json", bytes.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s -> %s: %v", c.from, c.to, err)
		}
	}
	// Metadata JSON cannot hold is refused when writing, not changed.
	s := manifestSchema()
	s.Streams[0].Metadata[0].Data.Values.Strings[0] = "\xff"
	if _, err := testManifest(s).Marshal(); err == nil {
		t.Error("metadata with invalid UTF-8 written")
	}
}

// TestManifestHostile: a manifest followed by more JSON (a second manifest appended) and one
// whose chunk table sums wrap around int64 to the totals it claims are refused, as
// testdata/fuzz/FuzzManifest/seed-manifest-trailing and seed-manifest-sum-overflow (written
// by scripts/fuzz-seeds.py) decoded before.
func TestManifestHostile(t *testing.T) {
	b, err := testManifest(manifestSchema()).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeManifest("m.json", bytes.NewReader(append(b, `{"shards": []}`...)))
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.Offset != int64(len(b))-1 || !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), "data after") {
		t.Errorf("trailing data: %v", err)
	}
	m := &Manifest{Version: Version, Format: "cbf", Schema: mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 3}}},
		Shards: []Entry{{Path: "a.cbf", Chunks: 3, ChunkTable: [][2]int64{{math.MaxInt64, 1}, {math.MaxInt64, 1}, {2, 0}}, Samples: 2}}}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeManifest("m.json", bytes.NewReader(b)); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), "past 2^63") {
		t.Errorf("a chunk table whose sums wrap to the entry's: %v", err)
	}
	m.Shards = []Entry{{Path: "a.cbf", Chunks: 1, ChunkTable: [][2]int64{{math.MaxInt64, 1}}, Sequences: math.MaxInt64, Samples: 1},
		{Path: "b.cbf", Chunks: 1, ChunkTable: [][2]int64{{math.MaxInt64, 1}}, Sequences: math.MaxInt64, Samples: 1},
		{Path: "c.cbf", Chunks: 1, ChunkTable: [][2]int64{{2, 0}}, Sequences: 2}}
	m.Samples = 2
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeManifest("m.json", bytes.NewReader(b)); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), "past 2^63") {
		t.Errorf("shards whose sums wrap to the manifest's: %v", err)
	}
}

// TestManifestVersion1 reads a manifest written before the documented form, whose "schema" is
// Go's form of the schema: testdata/v1 is `mlfeed convert --to idv --shards 2
// testdata/idv/termlookup_with_key-DefaultMap.idv shard/testdata/v1` run by mlfeed at 82af49e.
func TestManifestVersion1(t *testing.T) {
	m, err := ReadManifest("testdata/v1/mlfeed.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || len(m.Schema.Streams) == 0 {
		t.Fatalf("version %d, schema %+v", m.Version, m.Schema)
	}
	want := []mlfeed.Stream{{Name: "Term", Type: mlfeed.String, Dim: 1}, {Name: "Value", Type: mlfeed.Uint32, Dim: 1, KeyCount: 5}}
	if !reflect.DeepEqual(m.Schema.Streams, want) {
		t.Errorf("schema %+v, want %+v", m.Schema.Streams, want)
	}
	paths, rm, _, err := Resolve("testdata/v1")
	if err != nil || rm == nil || len(paths) != 2 || rm.Samples != 5 {
		t.Fatalf("Resolve: %v %+v %v", paths, rm, err)
	}
	// Written again, it takes the documented form and reads back the same.
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"schema"`)) || bytes.Contains(b, []byte(`"KeyCount"`)) {
		t.Errorf("version 1 manifest written again in Go's form:\n%s", b)
	}
	again, err := DecodeManifest("again.json", bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(again.Schema, m.Schema) {
		t.Fatalf("read back: %+v %v", again, err)
	}
}
