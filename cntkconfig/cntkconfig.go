// Package cntkconfig parses CNTK configuration files (the BrainScript "config" language of
// `.cntk` files) and maps their reader sections onto mlfeed's options: the streams and reader
// parameters a format needs (format.Options) and the minibatch engine's settings.
//
// The language accepted is what CNTK's reader configurations use:
//
//   - assignments `name = value`, separated by newlines or `;`; keys are case-insensitive;
//   - dictionaries `[ ... ]` (the classic form) and `{ ... }` (the BrainScript form);
//   - arrays `( a : b : c )`, as in `deserializers = ([ ... ]:[ ... ])`;
//   - quoted strings "..." and '...' (backslashes are literal, so Windows paths work);
//     unquoted values run to the end of the line, a `;`, a comment or a closing bracket;
//   - comments from `#` to the end of the line, and `//` at the start of a line or after
//     white space, outside quotes;
//   - `$name$` substitution, resolved in the enclosing dictionaries from the innermost outward,
//     case-insensitively, then in the overrides given to Parse (CNTK's command-line
//     `name=value` arguments), then `$ConfigDir$` (the directory of the file).
//
// Both reader forms are understood: the classic `reader = [ readerType = ...; file = ...;
// input = [ ... ] ]` and the composite `reader = { deserializers = ({ type = ...; file = ...;
// input = { ... } }) }`. Keys a reader section does not define are errors naming the file and
// line, with a suggestion for misspellings.
package cntkconfig

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by errors for text that is not a well-formed configuration.
var ErrSyntax = errors.New("cntkconfig: syntax error")

// ErrConfig is wrapped by errors for a well-formed configuration whose reader section is
// wrong: an unknown or misspelled key, a missing required key, a value of the wrong kind.
var ErrConfig = errors.New("cntkconfig: invalid reader configuration")

// ErrUnsupported is wrapped by errors for reader features mlfeed does not provide (other
// reader types such as the HTK or image readers, truncated BPTT).
var ErrUnsupported = errors.New("cntkconfig: unsupported")

// Error is an error at a line of a configuration file.
type Error struct {
	File string // file name as given to Parse
	Line int    // 1-based line
	Msg  string
	Err  error // ErrSyntax, ErrConfig or ErrUnsupported
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns the sentinel the error wraps.
func (e *Error) Unwrap() error { return e.Err }

// Kind says what a Value holds.
type Kind uint8

// The kinds of values.
const (
	Scalar Kind = iota // a string, number or boolean, kept as text
	Dict               // a [ ... ] or { ... } block
	Array              // a ( a : b ) list
)

// Value is a node of a parsed configuration.
type Value struct {
	Kind Kind
	// Text is a scalar's text, without quotes and before $name$ substitution.
	Text string
	// Quoted reports whether a scalar was written in quotes.
	Quoted bool
	// Entries are a dictionary's assignments in file order.
	Entries []*Entry
	// Items are an array's elements.
	Items []*Value
	// Line is the line where the value starts.
	Line int

	parent *Value // enclosing dictionary, for $name$ lookups
	cfg    *Config
}

// Entry is one `name = value` assignment of a dictionary.
type Entry struct {
	Key   string
	Value *Value
	Line  int
}
