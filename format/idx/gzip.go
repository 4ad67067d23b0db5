package idx

import (
	"bufio"
	"bytes"
	"io"
)

var gzipMagic = []byte{0x1f, 0x8b}

type peekReader interface {
	io.Reader
	Peek(n int) ([]byte, error)
}

func bufioReader(r io.Reader) peekReader {
	if p, ok := r.(peekReader); ok {
		return p
	}
	return bufio.NewReaderSize(r, 1<<16)
}

func isGzip(r peekReader) bool {
	b, _ := r.Peek(2)
	return bytes.Equal(b, gzipMagic)
}
