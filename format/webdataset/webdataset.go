// Package webdataset reads and writes WebDataset shards: tar files (plain or gzip-compressed)
// whose members KEY.EXT are grouped into samples by key, as the webdataset library groups them.
//
// # Mapping
//
// Members are taken in archive order. A member's name splits as webdataset's base_plus_ext
// splits it: the key is the name up to the first dot of its last path component (directories
// included, so "train/0001.jpg" has key "train/0001"), the extension everything after that
// dot, lowercased ("a.txt.gz" is extension "txt.gz", "a.f64.npy" "f64.npy"). Adjacent members
// with the same key form one sample, one sequence of mlfeed's, whose key is its id
// (Chunk.IDs). Like webdataset, the reader skips members that are not regular files, names
// without an extension, and metadata named __NAME__ at the top of the path; a sample that has
// one extension twice is an error.
//
// Each extension is a stream, typed by its last part as webdataset's default decoders type
// it: cls, cls2, index, inx and id hold an int64 in decimal text (one sample of dim 1); txt,
// text, transcript, json and jsn hold UTF-8 text (a String sample: the text as stored, JSON
// not parsed); npy holds a NumPy array, one dense sample of its dtype and shape (every member
// of the stream must have the same dtype; shapes must agree, except 1-d arrays of varying
// length, which become samples of varying size); anything else (jpg, png, wav, gz, ...) is
// one Bytes sample holding the member's bytes as stored. With ReaderOptions.Decode
// DecodeNone every stream is Bytes. A sample that lacks a member other samples have has an
// empty sequence (no sample) for that stream. Streams are listed in name order, so that
// shards of one data set have one schema.
//
// Opening a shard scans every tar header once (and the header of every .npy member), which
// gives the streams and a member-offset index; the chunk table groups whole samples, so random
// access, the block randomizer and workers split a shard by sample. Plain tar is read in place
// from its mapping. A gzip-compressed shard (.tar.gz, .tgz) has no random access: opening it
// decompresses it once, into memory up to ReaderOptions.MaxMemory, beyond into a temporary
// file, and reads from there. With ReaderOptions.CacheIndex the index is kept beside the file
// and reused while it is newer than the file.
//
// # Writing
//
// The Writer writes one sample per sequence, one member per stream that has a sample in it,
// named KEY.NAME: KEY is the sequence's id when the source has ids, else its number from 0,
// zero-padded to 9 digits. Bytes and String streams are stored as they are; an int64 stream of
// dim 1 whose name ends in one of the integer extensions (cls, ...) as decimal text; every
// other numeric stream as a .npy member (numpy.save's bytes), and NAME gains ".npy" unless it
// ends with it, so that webdataset and this reader decode it back. What a shard cannot hold is
// refused (ErrUnsupported, exit 2): sparse streams, sequences of several samples, stream names
// that are not lowercase extensions, ids that are not keys.
package webdataset

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// Sentinel errors, wrapping mlfeed's.
var (
	// ErrFormat is wrapped by errors for data that is not a valid shard: a bad tar header, a
	// sample with an extension twice, a member its extension does not describe (an integer
	// that is not one, text that is not UTF-8, a broken .npy).
	ErrFormat = fmt.Errorf("webdataset: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for archives that end inside a header or a member.
	ErrTruncated = fmt.Errorf("webdataset: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for a member beyond ReaderOptions.MaxMember.
	ErrTooLarge = fmt.Errorf("webdataset: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for data or options mlfeed does not handle: sparse
	// tar members, .npy members of no single dtype or shape, values a shard cannot hold.
	ErrUnsupported = fmt.Errorf("webdataset: %w", mlfeed.ErrUnsupported)
)

// DefaultChunkSize is the default number of bytes of members per chunk.
const DefaultChunkSize = 4 << 20

// DefaultMaxMemory is the default bound on the decompressed data of a compressed shard held
// in memory; beyond it the data goes to a temporary file.
const DefaultMaxMemory = 1 << 30

// DefaultMaxMember is the default bound on one member's size.
const DefaultMaxMember = 1 << 30

// Decode modes (ReaderOptions.Decode, the decode= option).
const (
	DecodeDefault = ""     // by extension, as webdataset's default decoders
	DecodeNone    = "none" // every stream Bytes, as stored
)

// Compressions (ReaderOptions.Compression, WriterOptions.Compression, compression=).
const (
	CompressionAuto = ""     // from the data: gzip header, else none
	CompressionNone = "none" // plain tar
	CompressionGzip = "gzip" // .tar.gz, .tgz
)

// kind is how a stream's members are decoded.
type kind uint8

const (
	kindBytes kind = iota // the member's bytes
	kindInt               // decimal int64
	kindText              // UTF-8 text
	kindNpy               // a NumPy array
)

// extKind returns the kind webdataset's default decoders give an extension, by its last
// part.
func extKind(ext string) kind {
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i+1:]
	}
	switch ext {
	case "cls", "cls2", "index", "inx", "id":
		return kindInt
	case "txt", "text", "transcript", "json", "jsn":
		return kindText
	case "npy":
		return kindNpy
	}
	return kindBytes
}

// SplitName splits a member name into key and extension as webdataset's base_plus_ext does
// (the regular expression ^((?:.*/|)[^.]+)[.]([^/]*)$): ok is false when the name has no
// extension. The extension is returned as stored; the reader lowercases it.
func SplitName(name string) (key, ext string, ok bool) {
	if strings.IndexByte(name, '\n') >= 0 {
		return splitNameRE(name)
	}
	i := strings.LastIndexByte(name, '/') // -1 when none
	last := name[i+1:]
	j := strings.IndexByte(last, '.')
	switch {
	case j > 0:
		return name[:i+1+j], last[j+1:], true
	case j < 0 || i < 0:
		return "", "", false
	}
	// The last component starts with a dot: the key ends with the '/' before it and starts
	// after the previous '/' (or at the start), and must hold no dot.
	p := strings.LastIndexByte(name[:i], '/')
	if strings.IndexByte(name[p+1:i], '.') >= 0 {
		return "", "", false
	}
	return name[:i+1], last[1:], true
}

// keyRE is webdataset's base_plus_ext pattern, for names SplitName does not take apart itself;
// compiled on first use, not when a program that links the format starts.
var keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^((?:.*/|)[^.]+)[.]([^/]*)$`) })

func splitNameRE(name string) (key, ext string, ok bool) {
	m := keyRE().FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// isMeta reports whether webdataset skips a member as metadata: a name whose first path
// component is __NAME__ (its skip_meta pattern __[^/]*__($|/)).
func isMeta(name string) bool {
	c := name
	if i := strings.IndexByte(c, '/'); i >= 0 {
		c = c[:i]
	}
	return len(c) >= 4 && strings.HasPrefix(c, "__") && strings.HasSuffix(c, "__")
}

// ustarMagic is the magic at byte 257 of a POSIX (and GNU) tar header.
const ustarMagic = "ustar"

// Match reports whether head starts with a tar header in ustar or GNU format, plain or at the
// start of gzip data.
func Match(head []byte) bool {
	if matchPlain(head) {
		return true
	}
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		return false
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return false
	}
	var b [263]byte
	n, _ := io.ReadFull(zr, b[:])
	return matchPlain(b[:n])
}

func matchPlain(head []byte) bool {
	return len(head) >= 262 && string(head[257:262]) == ustarMagic && validChecksum(head)
}

// validChecksum checks a tar header's checksum when head holds the whole 512-byte block, and
// reports true when it is shorter (the magic is all there is to go on).
func validChecksum(head []byte) bool {
	if len(head) < 512 {
		return true
	}
	var u, signed int64 // tar's sum of the header's bytes, unsigned and (old tars) signed
	for i, c := range head[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		u += int64(c)
		signed += int64(int8(c))
	}
	f := strings.TrimRight(strings.TrimLeft(string(head[148:156]), " "), " \x00")
	var v int64
	for _, c := range f {
		if c < '0' || c > '7' {
			return false
		}
		v = v*8 + int64(c-'0')
	}
	return f != "" && (v == u || v == signed)
}
