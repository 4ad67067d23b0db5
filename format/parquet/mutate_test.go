package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// readWhole opens data as a Parquet file and decodes every row group.
func readWhole(data []byte) error {
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "m.parquet", nil)
	if err != nil {
		return err
	}
	defer rd.Close()
	for i := range rd.Chunks() {
		if _, err := rd.ReadChunk(context.Background(), i); err != nil {
			return err
		}
	}
	return nil
}

// arrowReads reports whether arrow-go on its own reads data as a Parquet file to a table, and
// if not, its error (a panic included); schemaOK says that it read the footer and made the
// Arrow schema. It ignores logical types it does not know, as the
// format says readers do, and allocates within the default budget.
func arrowReads(data []byte) (schemaOK bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	mem := arrowmap.Allocator(0)
	r := bytes.NewReader(data)
	props := file.WithReadProps(pq.NewReaderProperties(mem))
	pf, err := openParquet(r, int64(len(data)), props)
	if err != nil {
		// Readers ignore logical types they do not know, as the format says.
		md := patchedFooter(r, int64(len(data)))
		if md == nil {
			return false, err
		}
		if pf, err = openParquet(r, int64(len(data)), props, file.WithMetadata(md)); err != nil {
			return false, err
		}
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return false, err
	}
	if _, err := fr.Schema(); err != nil {
		return false, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return true, err
	}
	tbl.Release()
	return true, nil
}

// TestMutatedFiles changes single bytes of the testdata files (half of them in the footer,
// where the schema lives) and reads each result: never a panic, and never ErrUnsupported
// (exit 2) for a file that is broken. The test tells the two apart by asking arrow-go alone:
// a file it reads to a table is valid Parquet, and mlfeed may refuse a feature of it (a type,
// a null) as unsupported; a file it cannot read, for any reason but one it reports as not
// implemented, is invalid, and must be ErrFormat or ErrTruncated. Nor may an error claim byte
// offset 0 for anything but the magic number. (170 of 1,296 such files were "unsupported"
// before.)
func TestMutatedFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.parquet")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	per := 300
	if testing.Short() {
		per = 60
	}
	rng := rand.New(rand.NewPCG(28, 5))
	total, wrong := 0, 0
	for _, f := range files {
		orig, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		footer := int(binary.LittleEndian.Uint32(orig[len(orig)-8:])) + 8
		// A file whose schema mlfeed refuses as unsupported is refused so at open, before any
		// of its (mutated) data is looked at: that refusal stands.
		origErr := readWhole(orig)
		for k := 0; k < per; k++ {
			data := bytes.Clone(orig)
			var at int
			if k%2 == 0 {
				at = len(data) - 1 - rng.IntN(min(footer, len(data)))
			} else {
				at = rng.IntN(len(data))
			}
			data[at] ^= byte(1 + rng.IntN(255))
			total++
			err := readWhole(data)
			var pe *mlfeed.PosError
			if errors.As(err, &pe) && pe.Offset == 0 && pe.Field != "magic" {
				t.Errorf("%s, byte %d changed: offset 0 is not the place: %v", filepath.Base(f), at, err)
			}
			if !errors.Is(err, mlfeed.ErrUnsupported) || origErr != nil && err.Error() == origErr.Error() {
				continue
			}
			schemaOK, aerr := arrowReads(data)
			if errors.As(err, &pe) && pe.Field == "schema" && schemaOK {
				continue // the schema is valid, and declares what mlfeed does not hold
			}
			if aerr != nil && !arrowLacks(aerr) {
				wrong++
				if wrong <= 10 {
					t.Errorf("%s, byte %d changed: %v; but the file is broken (arrow-go: %v)", filepath.Base(f), at, err, aerr)
				}
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d mutated files called unsupported, though broken", wrong, total)
	}
}
