package mlfeed

import (
	"fmt"
	"strings"
)

// Stream describes one stream (an input in CNTK's words, a column in IDV's) of a data set.
type Stream struct {
	// Name is the stream's name ("features", "labels", an IDV column name).
	Name string
	// Alias is the short name a format uses for the stream in the file, if any (CTF's
	// `|alias`). Empty means the same as Name.
	Alias string
	// Storage says whether samples are dense or sparse.
	Storage Storage
	// Type is the element type of the values.
	Type ElemType
	// Dim is the number of values in one dense sample, or the index bound of a sparse one.
	// Zero with a nil Shape means variable: dense samples of different lengths (IDV
	// variable-size vectors) or a sparse stream with no declared bound. (A fixed size of zero
	// has a Shape with a zero in it.)
	Dim int
	// Shape is the sample's shape when it has more than one axis (an IDX image is [28 28],
	// an IDV vector type may have several dimensions). Nil means [Dim]. When set, the product
	// of Shape equals Dim.
	Shape []int
	// KeyCount is non-zero for key (categorical) streams: raw value 0 is missing, valid
	// values are 1..KeyCount (IDV Key2). Type is then an unsigned integer type.
	KeyCount uint64
	// DefinesMBSize marks the stream whose sample count defines minibatch sizes (CNTK's
	// definesMBSize). At most one stream of a schema sets it.
	DefinesMBSize bool
	// Metadata holds typed annotations of the stream (IDV slot names, key values,
	// IsNormalized, ...), in file order.
	Metadata []Annotation
}

// FileName returns the name a format writes for the stream: Alias if set, else Name.
func (s *Stream) FileName() string {
	if s.Alias != "" {
		return s.Alias
	}
	return s.Name
}

// SampleShape returns Shape, or [Dim] when Shape is nil.
func (s *Stream) SampleShape() []int {
	if s.Shape != nil {
		return s.Shape
	}
	return []int{s.Dim}
}

// String describes the stream in one line, for example "features dense uint8 28x28".
func (s Stream) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if s.Alias != "" && s.Alias != s.Name {
		fmt.Fprintf(&b, " (alias %s)", s.Alias)
	}
	fmt.Fprintf(&b, " %s %s", s.Storage, s.Type)
	if s.KeyCount > 0 {
		fmt.Fprintf(&b, " key[%d]", s.KeyCount)
	}
	if s.Dim == 0 && s.Shape == nil {
		b.WriteString(" variable")
	} else {
		dims := make([]string, 0, len(s.SampleShape()))
		for _, d := range s.SampleShape() {
			dims = append(dims, fmt.Sprint(d))
		}
		b.WriteString(" " + strings.Join(dims, "x"))
	}
	return b.String()
}

// Annotation is one typed metadata item of a stream, such as IDV's SlotNames. Its value is one
// sample of the type Desc describes, held in Data as a single sequence of a single sample.
type Annotation struct {
	// Name is the metadata kind, for example "SlotNames", "KeyValues", "IsNormalized".
	Name string
	// Desc describes the value's type (Name is unused).
	Desc Stream
	// Data holds exactly one sequence of one sample.
	Data StreamData
}

// Schema lists the streams of a data set.
type Schema struct {
	// Streams are the data set's streams; chunks hold their data in the same order.
	Streams []Stream
	// HasIDs reports whether sequences carry ids (CTF sequence ids); see Chunk.IDs.
	HasIDs bool
}

// Index returns the position of the stream called name (matching Name or Alias), or -1.
func (s *Schema) Index(name string) int {
	for i := range s.Streams {
		if s.Streams[i].Name == name {
			return i
		}
	}
	for i := range s.Streams {
		if s.Streams[i].Alias == name {
			return i
		}
	}
	return -1
}

// Validate checks that the schema is well formed: names present and unique, known element
// types, shapes that agree with Dim, at most one DefinesMBSize stream.
func (s *Schema) Validate() error {
	seen := map[string]bool{}
	defining := 0
	for i := range s.Streams {
		st := &s.Streams[i]
		if st.Name == "" {
			return fmt.Errorf("mlfeed: stream %d has no name", i)
		}
		if seen[st.Name] {
			return fmt.Errorf("mlfeed: stream name %q used twice", st.Name)
		}
		seen[st.Name] = true
		if st.Type == Invalid || st.Type >= numElemTypes {
			return fmt.Errorf("mlfeed: stream %q has an invalid element type", st.Name)
		}
		if st.Dim < 0 {
			return fmt.Errorf("mlfeed: stream %q has a negative dimension", st.Name)
		}
		if st.Shape != nil {
			p := 1
			for _, d := range st.Shape {
				if d < 0 {
					return fmt.Errorf("mlfeed: stream %q has a negative shape %v", st.Name, st.Shape)
				}
				p *= d
			}
			if p != st.Dim {
				return fmt.Errorf("mlfeed: stream %q: shape %v does not multiply to dim %d", st.Name, st.Shape, st.Dim)
			}
		}
		if st.DefinesMBSize {
			defining++
		}
	}
	if defining > 1 {
		return fmt.Errorf("mlfeed: %d streams define the minibatch size; at most one may", defining)
	}
	return nil
}
