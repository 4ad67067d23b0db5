package tfrecord_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mlfeed/mlfeed/format/tfrecord"
)

// Reading TFX's SequenceExample file: the context features that some records leave empty are
// sequences of scalars, and the feature list "s" holds bytes, one sample per entry.
func ExampleOpen() {
	rd, err := tfrecord.Open(filepath.Join("testdata", "seq_eval.tfrecord.gz"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	fmt.Println(rd.Mode(), rd.Records(), "records")
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	c, _ := rd.ReadChunk(context.Background(), 0)
	s := c.Streams[2]
	fmt.Printf("record 0: %q\n", s.Values.Strings[s.SeqStart[0]:s.SeqStart[1]])
	// Output:
	// sequence_example 4500 records
	// f dense float32 1
	// i dense int64 1
	// s dense bytes 1
	// record 0: ["10500" "10501"]
}
