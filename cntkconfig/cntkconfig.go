// Package cntkconfig parses CNTK configuration files (`.cntk`, the configuration language of
// CNTK's `configFile=` command line) and maps their reader sections onto mlfeed's options: the
// streams and reader parameters a format needs (format.Options) and the minibatch engine's
// settings.
//
// Real configuration files hold much more than readers: network definitions in BrainScript
// (`BrainScriptNetworkBuilder = [ ... ]`), NDL, macros (`ConvReLULayer(inp, outMap) = [ ... ]`),
// SGD settings, command lists. The parser reads them as CNTK does, without interpreting them:
//
//   - assignments `name = value`, separated by newlines, `;` or `,`; names are
//     case-insensitive; a bare word is a flag set to true;
//   - blocks `[ ... ]` and `{ ... }`, lists `( a : b : c )` and `a : b` after a block or
//     string, as in `deserializers = ([ ... ]:[ ... ])`; brackets must match across the whole
//     file, but a block's text is split into assignments only when something inside it is
//     asked for, so network definitions are never parsed further;
//   - strings "..." (which may span lines) and '...' (on one line); backslashes are literal,
//     so Windows paths work; unquoted values run to the end of the line, a `;` or a `,`
//     outside brackets;
//   - comments from `#` or `//` to the end of the line when at a line start or after white
//     space, and BrainScript's `/* ... */`, outside strings;
//   - `$name$` substitution when a value is read (never before, so an undefined variable in a
//     section that is not read is no error), case-insensitively: at the top level first, as
//     CNTK resolves them, then (for names CNTK would reject) in the enclosing blocks from the
//     innermost outward; the defines (CNTK's command-line `name=value` arguments,
//     Options.Defines) are top-level assignments after the file's, so they replace the file's
//     values; `$ConfigDir$`, unless set, is the directory of the file.
//
// Both reader forms are understood: the classic `reader = [ readerType = ...; file = ...;
// input = [ ... ] ]` and the composite `reader = { deserializers = ({ type = ...; file = ...;
// input = { ... } }) }`. Keys a CTF or CBF reader section does not define are errors naming
// the file and line, with a suggestion for misspellings; other reader types (HTK, image,
// language-model readers) are ErrUnsupported errors naming the type.
package cntkconfig

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// ErrSyntax is wrapped by errors for text that is not a well-formed configuration.
// It wraps mlfeed.ErrFormat.
var ErrSyntax = fmt.Errorf("cntkconfig: syntax error: %w", mlfeed.ErrFormat)

// ErrConfig is wrapped by errors for a well-formed configuration whose reader section is
// wrong: an unknown or misspelled key, a missing required key, a value of the wrong kind.
// It wraps mlfeed.ErrFormat.
var ErrConfig = fmt.Errorf("cntkconfig: invalid reader configuration: %w", mlfeed.ErrFormat)

// ErrUnsupported is wrapped by errors for reader features mlfeed does not provide (other
// reader types such as the HTK or image readers, truncated BPTT).
// It wraps mlfeed.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("cntkconfig: %w", mlfeed.ErrUnsupported)

// Error is an error at a line of a configuration file.
type Error struct {
	File string // file name as given to Parse
	Line int    // 1-based line
	Msg  string
	Err  error // ErrSyntax, ErrConfig or ErrUnsupported
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
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
	// Text is a scalar's text, without quotes and before $name$ substitution; for a block or
	// a list, the text between its brackets as written (a BrainScript network definition, for
	// example).
	Text string
	// Quoted reports whether a scalar was written in quotes.
	Quoted bool
	// Line is the line where the value starts.
	Line int

	parent  *Value // enclosing dictionary, for $name$ lookups
	cfg     *Config
	file    string         // file name for errors ("define NAME" for a define)
	bodies  []span         // a block's or list's text; several for merged blocks
	parsed  bool           // entries or items are set
	entries []*Entry       // a dictionary's assignments
	items   []*Value       // a list's elements
	merged  map[int]*Value // merged blocks Get returned, by the index of the last entry
}

// Entry is one `name = value` assignment of a dictionary.
type Entry struct {
	Key   string
	Value *Value
	Line  int
}
