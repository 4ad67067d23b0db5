package shard

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// manifestJSON is a manifest as stored in ManifestName (docs/scale.md, "Manifest layout").
type manifestJSON struct {
	Version int    `json:"mlfeed_manifest"`
	Format  string `json:"format"`
	// HasIDs and Streams are the schema.
	HasIDs  bool         `json:"has_ids"`
	Streams []streamJSON `json:"streams"`
	// Schema is read only, from manifests of version 1, which stored Go's form of the schema
	// beside a summary of its streams.
	Schema    *mlfeed.Schema `json:"schema,omitempty"`
	Sequences int64          `json:"sequences"`
	Samples   int64          `json:"samples"`
	Shards    []Entry        `json:"shards"`
	Task      *Task          `json:"task,omitempty"`
}

// streamJSON is one stream of a manifest: `mlfeed info --json`'s names, with what the schema
// needs besides: the shape as stored (absent: [dim]; with dim 0, variable), and the metadata
// as mlfeed.AnnotationJSON items.
type streamJSON struct {
	Name          string                  `json:"name"`
	Alias         string                  `json:"alias,omitempty"`
	Storage       string                  `json:"storage"`
	Type          string                  `json:"type"`
	Dim           int                     `json:"dim"`
	Shape         *[]int                  `json:"shape,omitempty"`
	KeyCount      uint64                  `json:"key_count,omitempty"`
	DefinesMBSize bool                    `json:"defines_mb_size,omitempty"`
	Metadata      []mlfeed.AnnotationJSON `json:"metadata,omitempty"`
}

// schemaToJSON returns the streams of s in a manifest's form.
func schemaToJSON(s mlfeed.Schema) ([]streamJSON, error) {
	out := make([]streamJSON, len(s.Streams))
	for i := range s.Streams {
		st := &s.Streams[i]
		meta, err := mlfeed.AnnotationsToJSON(st.Metadata)
		if err != nil {
			return nil, fmt.Errorf("stream %q: %w", st.Name, err)
		}
		out[i] = streamJSON{Name: st.Name, Alias: st.Alias, Storage: st.Storage.String(), Type: st.Type.String(),
			Dim: st.Dim, Shape: mlfeed.ShapeJSON(st.Shape), KeyCount: st.KeyCount, DefinesMBSize: st.DefinesMBSize, Metadata: meta}
	}
	return out, nil
}

// schemaFromJSON returns the schema the streams of a manifest describe.
func schemaFromJSON(streams []streamJSON, hasIDs bool) (mlfeed.Schema, error) {
	s := mlfeed.Schema{HasIDs: hasIDs, Streams: make([]mlfeed.Stream, len(streams))}
	for i, j := range streams {
		t, err := mlfeed.ParseElemType(j.Type)
		if err != nil {
			return s, fmt.Errorf("%w: stream %q: %v", ErrManifest, j.Name, err)
		}
		st := mlfeed.Stream{Name: j.Name, Alias: j.Alias, Type: t, Dim: j.Dim, Shape: mlfeed.ShapeFromJSON(j.Shape), KeyCount: j.KeyCount, DefinesMBSize: j.DefinesMBSize}
		switch j.Storage {
		case "dense":
		case "sparse":
			st.Storage = mlfeed.Sparse
		default:
			return s, fmt.Errorf("%w: stream %q: storage %q (dense or sparse)", ErrManifest, j.Name, j.Storage)
		}
		if st.Metadata, err = mlfeed.AnnotationsFromJSON(j.Metadata); err != nil {
			return s, fmt.Errorf("%w: stream %q: %v", ErrManifest, j.Name, err)
		}
		s.Streams[i] = st
	}
	return s, nil
}

// MarshalJSON returns the manifest in its stored form (docs/scale.md, "Manifest layout").
func (m Manifest) MarshalJSON() ([]byte, error) {
	streams, err := schemaToJSON(m.Schema)
	if err != nil {
		return nil, fmt.Errorf("shard: manifest: %w", err)
	}
	return json.Marshal(manifestJSON{Version: m.Version, Format: m.Format, HasIDs: m.Schema.HasIDs, Streams: streams,
		Sequences: m.Sequences, Samples: m.Samples, Shards: m.Shards, Task: m.Task})
}

// UnmarshalJSON reads a manifest in its stored form, or in version 1's, whose "schema" holds
// the schema. Unknown fields are errors. It does not check the manifest (DecodeManifest does).
func (m *Manifest) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var j manifestJSON
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*m = Manifest{Version: j.Version, Format: j.Format, Sequences: j.Sequences, Samples: j.Samples, Shards: j.Shards, Task: j.Task}
	if j.Schema != nil {
		if j.Version != 1 {
			return fmt.Errorf("%w: \"schema\" belongs to manifests of version 1, this is version %d", ErrManifest, j.Version)
		}
		m.Schema = *j.Schema
		return nil
	}
	s, err := schemaFromJSON(j.Streams, j.HasIDs)
	if err != nil {
		return err
	}
	m.Schema = s
	return nil
}
