package mlfeed

import (
	"fmt"
	"unicode/utf8"
)

// AnnotationJSON is the JSON form of an Annotation, used where a schema is stored as JSON (an
// Arrow field's mlfeed.metadata key, a sharded data set's manifest). The value's type is
// described as a stream's is (type, storage, dim, shape, key_count, and its own metadata);
// its data is its one sequence's sample offsets (seq_start, and sample_start for sparse or
// variable-size values), the sparse indices, and the values: Bytes (base64 in JSON) holds
// fixed-size elements in little-endian order, Strings the elements of string and bytes types.
type AnnotationJSON struct {
	// Name is the annotation's kind ("SlotNames", "KeyValues", ...).
	Name string `json:"name"`
	// DescName is the value's stream name, normally empty.
	DescName string `json:"desc_name,omitempty"`
	// Type, Storage, Dim, Shape and KeyCount describe the value as Stream's fields do; a nil
	// Shape (absent in JSON) is Stream's nil Shape, [Dim].
	Type     string `json:"type"`
	Storage  string `json:"storage"`
	Dim      int    `json:"dim"`
	Shape    *[]int `json:"shape,omitempty"`
	KeyCount uint64 `json:"key_count,omitempty"`
	// Metadata holds the value's own annotations.
	Metadata []AnnotationJSON `json:"metadata,omitempty"`
	// SeqStart, SampleStart and Indices are StreamData's.
	SeqStart    []int64 `json:"seq_start"`
	SampleStart []int64 `json:"sample_start,omitempty"`
	Indices     []int32 `json:"indices,omitempty"`
	// Bytes holds fixed-size elements, Strings string and bytes elements.
	Bytes   []byte   `json:"bytes,omitempty"`
	Strings []string `json:"strings,omitempty"`
}

// maxAnnotationDepth bounds how deeply annotations of annotations may nest.
const maxAnnotationDepth = 8

// AnnotationsToJSON returns the JSON form of as. It fails for a string element that is not
// valid UTF-8, which a JSON string cannot hold unchanged.
func AnnotationsToJSON(as []Annotation) ([]AnnotationJSON, error) {
	if len(as) == 0 {
		return nil, nil
	}
	out := make([]AnnotationJSON, len(as))
	for i, a := range as {
		for _, s := range a.Data.Values.Strings {
			if !utf8.ValidString(s) {
				return nil, fmt.Errorf("mlfeed: annotation %q: a %s element is not valid UTF-8, which JSON cannot hold", a.Name, a.Desc.Type)
			}
		}
		meta, err := AnnotationsToJSON(a.Desc.Metadata)
		if err != nil {
			return nil, err
		}
		out[i] = AnnotationJSON{
			Name: a.Name, DescName: a.Desc.Name, Type: a.Desc.Type.String(), Storage: a.Desc.Storage.String(),
			Dim: a.Desc.Dim, Shape: ShapeJSON(a.Desc.Shape), KeyCount: a.Desc.KeyCount, Metadata: meta,
			SeqStart: a.Data.SeqStart, SampleStart: a.Data.SampleStart, Indices: a.Data.Indices,
			Bytes: a.Data.Values.Bytes, Strings: a.Data.Values.Strings,
		}
	}
	return out, nil
}

// AnnotationsFromJSON returns the annotations js describes, each checked as a schema and a
// chunk are (Schema.Validate, Chunk.Validate). Errors wrap ErrFormat.
func AnnotationsFromJSON(js []AnnotationJSON) ([]Annotation, error) {
	return annotationsFromJSON(js, 0)
}

func annotationsFromJSON(js []AnnotationJSON, depth int) ([]Annotation, error) {
	if depth > maxAnnotationDepth {
		return nil, fmt.Errorf("%w: annotations nested more than %d deep", ErrFormat, maxAnnotationDepth)
	}
	if len(js) == 0 {
		return nil, nil
	}
	out := make([]Annotation, len(js))
	for i, j := range js {
		t, err := ParseElemType(j.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: annotation %q: %v", ErrFormat, j.Name, err)
		}
		desc := Stream{Name: j.DescName, Type: t, Dim: j.Dim, Shape: ShapeFromJSON(j.Shape), KeyCount: j.KeyCount}
		switch j.Storage {
		case "dense":
		case "sparse":
			desc.Storage = Sparse
		default:
			return nil, fmt.Errorf("%w: annotation %q: storage %q (dense or sparse)", ErrFormat, j.Name, j.Storage)
		}
		if desc.Metadata, err = annotationsFromJSON(j.Metadata, depth+1); err != nil {
			return nil, err
		}
		named := desc
		named.Name = "metadata"
		sc := Schema{Streams: []Stream{named}}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("%w: annotation %q: %v", ErrFormat, j.Name, err)
		}
		data := StreamData{SeqStart: j.SeqStart, SampleStart: j.SampleStart, Indices: j.Indices,
			Values: Buffer{Type: t, Bytes: j.Bytes, Strings: j.Strings}}
		if t.IsVarLen() {
			data.Values.Bytes = nil
			if data.Values.Strings == nil {
				data.Values.Strings = []string{}
			}
		} else {
			data.Values.Strings = nil
			if data.Values.Bytes == nil {
				data.Values.Bytes = []byte{}
			}
			if len(j.Strings) > 0 || len(j.Bytes)%t.Size() != 0 {
				return nil, fmt.Errorf("%w: annotation %q: %d bytes and %d strings for %s values", ErrFormat, j.Name, len(j.Bytes), len(j.Strings), t)
			}
		}
		if t.IsVarLen() && len(j.Bytes) > 0 {
			return nil, fmt.Errorf("%w: annotation %q: bytes for %s values (they go in strings)", ErrFormat, j.Name, t)
		}
		c := Chunk{Sequences: 1, Streams: []StreamData{data}}
		if err := c.Validate(&sc); err != nil {
			return nil, fmt.Errorf("%w: annotation %q: %v", ErrFormat, j.Name, err)
		}
		out[i] = Annotation{Name: j.Name, Desc: desc, Data: data}
	}
	return out, nil
}

// ShapeJSON returns a Stream's Shape for JSON, where a nil Shape ([Dim]) is left out and a
// Shape of no axes (a single value) is [].
func ShapeJSON(shape []int) *[]int {
	if shape == nil {
		return nil
	}
	return &shape
}

// ShapeFromJSON returns the Stream Shape that ShapeJSON gave p for.
func ShapeFromJSON(p *[]int) []int {
	if p == nil {
		return nil
	}
	if *p == nil {
		return []int{}
	}
	return *p
}
