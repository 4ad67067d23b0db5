package mlfeed

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestAnnotationsJSON(t *testing.T) {
	as := []Annotation{
		{Name: "SlotNames", Desc: Stream{Type: String, Dim: 2}, Data: StreamData{SeqStart: []int64{0, 1}, Values: Buffer{Type: String, Strings: []string{"a", "b"}}}},
		{Name: "Scale", Desc: Stream{Type: Float64, Dim: 1, Shape: []int{}}, Data: StreamData{SeqStart: []int64{0, 1}, Values: Buffer{Type: Float64, Bytes: make([]byte, 8)}}},
		{Name: "Sparse", Desc: Stream{Type: Int32, Storage: Sparse, Dim: 9}, Data: StreamData{SeqStart: []int64{0, 1}, SampleStart: []int64{0, 1}, Indices: []int32{4}, Values: Buffer{Type: Int32, Bytes: []byte{7, 0, 0, 0}}}},
	}
	js, err := AnnotationsToJSON(as)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(js)
	var back []AnnotationJSON
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, err := AnnotationsFromJSON(back)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, as) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, as)
	}
	for _, bad := range []string{
		`[{"name": "x", "type": "bytes", "storage": "dense", "dim": 1, "seq_start": [0, 1], "bytes": "AAAA"}]`,
		`[{"name": "x", "type": "invalid", "storage": "dense", "dim": 1, "seq_start": [0, 1], "bytes": "AAAA"}]`,
		`[{"name": "x", "type": "float32", "storage": "dense", "dim": 1, "seq_start": [0, 1], "bytes": "AAA="}]`,
		`[{"name": "x", "type": "float32", "storage": "ragged", "dim": 1, "seq_start": [0, 1], "bytes": "AAAAAA=="}]`,
		`[{"name": "x", "type": "float32", "storage": "dense", "dim": 2, "seq_start": [0, 1], "bytes": "AAAAAA=="}]`,
		`[{"name": "x", "type": "string", "storage": "dense", "dim": 1, "seq_start": [0, 1], "strings": ["a"], "bytes": "AA=="}]`,
	} {
		var js []AnnotationJSON
		if err := json.Unmarshal([]byte(bad), &js); err != nil {
			t.Fatal(err)
		}
		if _, err := AnnotationsFromJSON(js); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	as[0].Data.Values.Strings[0] = "\xff"
	if _, err := AnnotationsToJSON(as); err == nil {
		t.Error("invalid UTF-8 encoded")
	}
}
