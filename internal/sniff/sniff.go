// Package sniff recognises compressed data by its magic bytes, in one place for every format
// and the format registry: formats that accept gzip-compressed input (IDX, Matrix Market)
// and detection by content ask here.
package sniff

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
)

// gzipMagic starts every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// IsGzip reports whether head starts with gzip's magic bytes.
func IsGzip(head []byte) bool { return bytes.HasPrefix(head, gzipMagic) }

// Reader is a reader that can look ahead without consuming.
type Reader interface {
	io.Reader
	Peek(n int) ([]byte, error)
}

// Buffered returns r as a Reader: r itself when it can peek, else r behind a buffer.
func Buffered(r io.Reader) Reader {
	if p, ok := r.(Reader); ok {
		return p
	}
	return bufio.NewReaderSize(r, 1<<16)
}

// Gunzip returns a reader of the data r holds, decompressed when it starts with gzip's magic
// bytes (gz reports that it does), as it stands otherwise. Close releases the decompressor;
// it does not close r. A gzip header that cannot be read is the error of gzip.NewReader.
func Gunzip(r io.Reader) (rc io.ReadCloser, gz bool, err error) {
	br := Buffered(r)
	head, _ := br.Peek(len(gzipMagic))
	if !IsGzip(head) {
		return io.NopCloser(br), false, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, err
	}
	return z, true, nil
}
