package inspect

import (
	"testing"

	"github.com/mlfeed/mlfeed"
)

// Bytes values are JSON strings of their standard, padded base64, whatever bytes they hold;
// text stays text.
func TestBytesAsBase64(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "b", Type: mlfeed.Bytes, Dim: 1},
		{Name: "s", Type: mlfeed.String, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 3}, Values: mlfeed.Buffer{Type: mlfeed.Bytes, Strings: []string{"\xff\xd8\x00", "", "ab"}}},
		{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"ab"}}},
	}}
	got := string(AppendSequence(nil, &sc, c, 0))
	if want := `{"b":[["/9gA"],[""],["YWI="]],"s":[["ab"]]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
