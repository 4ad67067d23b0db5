package mlfeed

import (
	"errors"
	"fmt"
)

// Sentinel errors. Format packages wrap them (idx.ErrFormat wraps ErrFormat, and so on), so a
// caller can test any format's error with errors.Is.
var (
	// ErrFormat means the data is not valid for its format.
	ErrFormat = errors.New("invalid data")
	// ErrTruncated means the data ends before the format says it should.
	ErrTruncated = errors.New("unexpected end of data")
	// ErrUnsupported means the data is valid but uses a feature mlfeed does not implement, or
	// asks for a conversion a format cannot hold (strings into IDX).
	ErrUnsupported = errors.New("unsupported")
	// ErrRange means a value does not fit the type it must be stored in.
	ErrRange = errors.New("value out of range")
	// ErrTooLarge means a header claims more data than the file holds or a limit allows;
	// it is returned before anything is allocated for the claim.
	ErrTooLarge = errors.New("size exceeds the data or limit")
	// ErrUnknownFormat means no registered format recognises a file or a name.
	ErrUnknownFormat = errors.New("unknown format")
)

// PosError is an error at a position in a file: a line and column for text formats, a byte
// offset (and the field being read) for binary formats.
type PosError struct {
	File   string // file name, if known
	Line   int    // 1-based line, 0 for binary formats
	Column int    // 1-based column (in bytes), 0 if unknown
	Offset int64  // byte offset for binary formats; -1 if not applicable
	Field  string // the field being read (binary formats), if known
	Err    error  // what went wrong; wraps a sentinel
}

// Error formats the position compiler-style: "file:line:col: msg" for text and
// "file: offset N (field): msg" for binary data.
func (e *PosError) Error() string {
	name := e.File
	if name == "" {
		name = "<input>"
	}
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %v", name, e.Line, e.Column, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", name, e.Line, e.Err)
	case e.Offset >= 0 && e.Field != "":
		return fmt.Sprintf("%s: byte offset %d (%s): %v", name, e.Offset, e.Field, e.Err)
	case e.Offset >= 0:
		return fmt.Sprintf("%s: byte offset %d: %v", name, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: %v", name, e.Err)
}

// Unwrap returns the underlying error.
func (e *PosError) Unwrap() error { return e.Err }

// OffsetError returns a PosError for a binary format: the file, the byte offset, the field
// being read, and the error (usually wrapping a sentinel with fmt.Errorf("%w: ...")).
func OffsetError(file string, offset int64, field string, err error) *PosError {
	return &PosError{File: file, Offset: offset, Field: field, Err: err}
}

// LineError returns a PosError for a text format at line:column.
func LineError(file string, line, column int, err error) *PosError {
	return &PosError{File: file, Line: line, Column: column, Offset: -1, Err: err}
}
