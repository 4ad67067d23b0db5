package mds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileInfo describes one file of a shard, as index.json does (raw_data, zip_data).
type FileInfo struct {
	Basename string            `json:"basename"`
	Bytes    int64             `json:"bytes"`
	Hashes   map[string]string `json:"hashes"`
}

// ShardInfo is one entry of index.json's "shards": MDSWriter's configuration of the shard and
// its files. Fields are in the order json.dump(sort_keys=True) writes them.
type ShardInfo struct {
	ColumnEncodings []string  `json:"column_encodings"`
	ColumnNames     []string  `json:"column_names"`
	ColumnSizes     []*int64  `json:"column_sizes"`
	Compression     *string   `json:"compression"`
	Format          string    `json:"format"`
	Hashes          []string  `json:"hashes"`
	RawData         *FileInfo `json:"raw_data"`
	Samples         int64     `json:"samples"`
	SizeLimit       *int64    `json:"size_limit"`
	Version         int       `json:"version"`
	ZipData         *FileInfo `json:"zip_data"`
}

// Index is an MDS data set's index.json.
type Index struct {
	Shards  []ShardInfo `json:"shards"`
	Version int         `json:"version"`
}

// maxIndex bounds the size of index.json read into memory.
const maxIndex = 256 << 20

// ReadIndex reads and checks dir's index.json.
func ReadIndex(dir string) (*Index, error) {
	name := filepath.Join(dir, IndexName)
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIndex+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxIndex {
		return nil, fmt.Errorf("%s: %w: index over %d bytes", name, ErrTooLarge, maxIndex)
	}
	return DecodeIndex(name, b)
}

// DecodeIndex parses the text of an index.json called name and checks what the reader relies
// on: version 2, MDS shards of the same columns, sample counts and sizes in range, shard files
// inside the data set's directory.
func DecodeIndex(name string, b []byte) (*Index, error) {
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&ix); err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, fmt.Errorf("%s: byte %d: %w: %v", name, off, ErrFormat, err)
	}
	if ix.Version != 2 {
		return nil, fmt.Errorf("%s: %w: index version %d (MDS indexes are version 2)", name, ErrUnsupported, ix.Version)
	}
	for i := range ix.Shards {
		if err := checkShard(&ix.Shards[i], &ix.Shards[0]); err != nil {
			return nil, fmt.Errorf("%s: shard %d: %w", name, i, err)
		}
	}
	return &ix, nil
}

// checkShard checks one shard entry, and that it has first's columns.
func checkShard(s, first *ShardInfo) error {
	if s.Format != "mds" {
		return fmt.Errorf("%w: format %q (mlfeed reads MDS shards only)", ErrUnsupported, s.Format)
	}
	if s.Version != 2 {
		return fmt.Errorf("%w: shard version %d (want 2)", ErrUnsupported, s.Version)
	}
	if len(s.ColumnNames) == 0 || len(s.ColumnNames) != len(s.ColumnEncodings) || len(s.ColumnNames) != len(s.ColumnSizes) {
		return fmt.Errorf("%w: %d column names, %d encodings, %d sizes", ErrFormat, len(s.ColumnNames), len(s.ColumnEncodings), len(s.ColumnSizes))
	}
	seen := map[string]bool{}
	for _, n := range s.ColumnNames {
		if seen[n] {
			return fmt.Errorf("%w: column %q twice", ErrFormat, n)
		}
		seen[n] = true
	}
	if s != first {
		if !equalStrings(s.ColumnNames, first.ColumnNames) || !equalStrings(s.ColumnEncodings, first.ColumnEncodings) {
			return fmt.Errorf("%w: columns %q (%q) differ from shard 0's %q (%q)", ErrUnsupported, s.ColumnNames, s.ColumnEncodings, first.ColumnNames, first.ColumnEncodings)
		}
	}
	if s.Samples < 0 || s.Samples >= 1<<32 {
		return fmt.Errorf("%w: %d samples", ErrFormat, s.Samples)
	}
	if s.RawData == nil {
		return fmt.Errorf("%w: no raw_data", ErrFormat)
	}
	for _, fi := range []*FileInfo{s.RawData, s.ZipData} {
		if fi == nil {
			continue
		}
		if fi.Bytes < 0 || fi.Bytes >= 1<<32 {
			return fmt.Errorf("%w: file %q of %d bytes (offsets are uint32)", ErrFormat, fi.Basename, fi.Bytes)
		}
		if !filepath.IsLocal(fi.Basename) || strings.Contains(fi.Basename, `\`) {
			return fmt.Errorf("%w: file name %q is not inside the data set's directory", ErrFormat, fi.Basename)
		}
	}
	if min := 4 + 4*(s.Samples+1); s.RawData.Bytes < min {
		return fmt.Errorf("%w: raw_data of %d bytes cannot hold the header of %d samples (%d bytes)", ErrFormat, s.RawData.Bytes, s.Samples, min)
	}
	if s.ZipData != nil && (s.Compression == nil || *s.Compression == "") {
		return fmt.Errorf("%w: zip_data without a compression", ErrFormat)
	}
	if s.Compression != nil && *s.Compression != "" {
		if _, err := codecOf(*s.Compression); err != nil {
			return err
		}
		if s.ZipData == nil {
			return fmt.Errorf("%w: compression %q without zip_data", ErrFormat, *s.Compression)
		}
	}
	return nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// IsDataset reports whether dir is a directory holding an MDS index.json (version 2, whose
// shards are MDS), or such an index.json itself: the test the format registry detects MDS data
// sets with.
func IsDataset(dir string) bool {
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() && filepath.Base(dir) == IndexName {
		dir = filepath.Dir(dir)
		fi, err = os.Stat(dir)
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.Open(filepath.Join(dir, IndexName))
	if err != nil {
		return false
	}
	defer f.Close()
	var head struct {
		Shards []struct {
			Format string `json:"format"`
		} `json:"shards"`
		Version int `json:"version"`
	}
	if err := json.NewDecoder(io.LimitReader(f, maxIndex)).Decode(&head); err != nil {
		return false
	}
	return head.Version == 2 && (len(head.Shards) == 0 || head.Shards[0].Format == "mds")
}
