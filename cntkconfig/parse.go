package cntkconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config is a parsed configuration file.
type Config struct {
	// File is the name the configuration was parsed from.
	File string
	// Root is the top-level dictionary: the file's assignments, then the defines.
	Root *Value
	// Dir is the directory of File, the value of $ConfigDir$ when the file does not set it.
	Dir string
}

// Options are the settings of Open. The zero value reads the file as it is.
type Options struct {
	// Defines are `name=value` assignments made after the file's own, as CNTK's command-line
	// arguments are (`cntk configFile=a.cntk DataDir=/data`): a define replaces a top-level
	// value of the same name (case-insensitively), which every `$name$` reference then sees.
	// A value in `[ ]` is a block merged into a block of the same name, as CNTK merges them
	// (`train=[reader=[randomize=false]]`). Defines are applied in the order of their names.
	// The name configFile reads more configuration files ('+'-separated, as CNTK's
	// `configFile=global.cntk+rnnlm.cntk`), each resolved as reader files are, and parsed as
	// if appended to this one.
	Defines map[string]string
}

// Open reads and parses the configuration file name with the defines of opts (nil: none).
func Open(name string, opts *Options) (*Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var defs []string
	if opts != nil {
		names := make([]string, 0, len(opts.Defines))
		for k := range opts.Defines {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			defs = append(defs, k+"="+opts.Defines[k])
		}
	}
	return Parse(name, data, defs...)
}

// ParseFile reads and parses the configuration file name. Each override is a `name=value`
// assignment applied at the top level after the file, in order, as CNTK's command line does
// (`defMBSize=true`); see Options.Defines.
func ParseFile(name string, overrides ...string) (*Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data, overrides...)
}

// Parse parses a configuration held in data; name is used in error messages and for
// $ConfigDir$. Overrides are as for ParseFile.
//
// Parsing checks only that brackets match and strings end: the text of a block is split into
// assignments when a value inside it is first asked for, and `$name$` references are resolved
// when the value holding them is read. Blocks that hold network definitions (BrainScript, NDL,
// macros) are never interpreted, so they cannot make a configuration fail.
func Parse(name string, data []byte, overrides ...string) (*Config, error) {
	cfg := &Config{File: name, Dir: filepath.Dir(name)}
	text := string(data)
	if err := checkBrackets(name, text); err != nil {
		return nil, err
	}
	root := &Value{Kind: Dict, Line: 1, cfg: cfg, bodies: []span{{text: text, line: 1, file: name}}}
	for _, o := range overrides {
		n, val, ok := ParseDefine(o)
		if !ok {
			return nil, &Error{File: name, Msg: fmt.Sprintf("define %q: want NAME=VALUE", o), Err: ErrSyntax}
		}
		if strings.EqualFold(n, "configFile") {
			for _, f := range strings.Split(val, "+") {
				more, err := os.ReadFile(resolvePath(f, cfg.Dir))
				if err != nil {
					return nil, err
				}
				if err := checkBrackets(f, string(more)); err != nil {
					return nil, err
				}
				root.bodies = append(root.bodies, span{text: string(more), line: 1, file: f})
			}
			continue
		}
		file := "define " + n
		if err := checkBrackets(file, o); err != nil {
			return nil, err
		}
		root.bodies = append(root.bodies, span{text: o, line: 1, file: file})
	}
	cfg.Root = root
	return cfg, nil
}

// SplitSection splits a `FILE[:SECTION]` argument (mlfeed's --config): the part after the
// last ':' is a section only when the whole argument is not an existing file and the part
// before it is, so Windows drive letters and file names holding ':' stay whole.
func SplitSection(arg string) (file, section string) {
	if _, err := os.Stat(arg); err == nil {
		return arg, ""
	}
	if i := strings.LastIndexByte(arg, ':'); i > 0 {
		if _, err := os.Stat(arg[:i]); err == nil {
			return arg[:i], arg[i+1:]
		}
	}
	return arg, ""
}

// ParseDefine splits a command-line define `NAME=VALUE` (CNTK's `DataDir=/data`): NAME must be
// a letter or '_' followed by letters, digits, '_' or '.'. ok is false for anything else, such
// as a file name.
func ParseDefine(arg string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(arg, "=")
	if !ok || name == "" || !(isLetter(name[0]) || name[0] == '_') {
		return "", "", false
	}
	for i := 1; i < len(name); i++ {
		if !isKeyByte(name[i]) {
			return "", "", false
		}
	}
	return name, value, true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// maxDepth bounds the nesting of brackets.
const maxDepth = 1000

// span is a stretch of configuration text: a block's body or a define.
type span struct {
	text    string
	line    int // line of text[0]
	file    string
	inBlock bool // text is the inside of brackets
}

// scanner walks a span, skipping comments and strings.
type scanner struct {
	s    string
	i    int
	line int
	file string
	// inBlock says that s is a block's body: its first byte follows a bracket, not a line start.
	inBlock bool
	// unclosed is set once a `/*` was found with no `*/` after it: none can close later.
	unclosed bool
}

func (sc *scanner) errorf(line int, format string, args ...any) error {
	return &Error{File: sc.file, Line: line, Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// afterBlank reports whether position i starts a line or follows white space.
func (sc *scanner) afterBlank(i int) bool {
	if i == 0 {
		return !sc.inBlock
	}
	return isBlank(sc.s[i-1]) || sc.s[i-1] == '\n'
}

// comment returns the end of a comment starting at i, or -1: `#` and `//` to the end of
// the line (at a line start or after white space, as CNTK's own `#` comments), `/* */`
// anywhere (BrainScript's).
func (sc *scanner) comment(i int) int {
	s := sc.s
	switch {
	case s[i] == '#' && sc.afterBlank(i),
		s[i] == '/' && i+1 < len(s) && s[i+1] == '/' && sc.afterBlank(i):
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	case s[i] == '/' && i+1 < len(s) && s[i+1] == '*' && !sc.unclosed:
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2
		}
		sc.unclosed = true
	}
	return -1
}

// skipComment moves past a comment at the current position and reports whether there was one.
func (sc *scanner) skipComment() bool {
	end := sc.comment(sc.i)
	if end < 0 {
		return false
	}
	sc.line += strings.Count(sc.s[sc.i:end], "\n")
	sc.i = end
	return true
}

// quoteEnd returns the index of the quote closing the string that opens at i, or -1: a "
// string runs to the next " (across lines, as in CNTK); a ' string must close on its line,
// else the ' is an ordinary character.
func (sc *scanner) quoteEnd(i int) int {
	q, rest := sc.s[i], sc.s[i+1:]
	if q == '\'' {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
	}
	j := strings.IndexByte(rest, q)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func closerOf(c byte) byte {
	switch c {
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return ')'
}

// skipBrackets moves from the opening bracket at the current position past its closing one.
func (sc *scanner) skipBrackets() error {
	stack := []byte{closerOf(sc.s[sc.i])}
	lines := []int{sc.line}
	sc.i++
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '\n':
			sc.line++
		case c == '"' || c == '\'':
			end := sc.quoteEnd(sc.i)
			if end < 0 {
				if c == '"' {
					return sc.errorf(sc.line, "unterminated string")
				}
				break
			}
			sc.line += strings.Count(sc.s[sc.i:end], "\n")
			sc.i = end
		case c == '[' || c == '{' || c == '(':
			if len(stack) >= maxDepth {
				return sc.errorf(sc.line, "brackets nest deeper than %d", maxDepth)
			}
			stack = append(stack, closerOf(c))
			lines = append(lines, sc.line)
		case c == ']' || c == '}' || c == ')':
			top := len(stack) - 1
			if c != stack[top] {
				return sc.errorf(sc.line, "%q closes the %q opened at line %d", c, opener(stack[top]), lines[top])
			}
			stack, lines = stack[:top], lines[:top]
			if len(stack) == 0 {
				sc.i++
				return nil
			}
		case c == '#' || c == '/':
			if sc.skipComment() {
				continue
			}
		}
		sc.i++
	}
	return sc.errorf(lines[len(lines)-1], "%q opened here is never closed", opener(stack[len(stack)-1]))
}

func opener(closer byte) byte {
	switch closer {
	case ']':
		return '['
	case '}':
		return '{'
	}
	return '('
}

// checkBrackets checks that the brackets of text match and its strings end. A closing
// bracket outside any block is an ordinary character, as it is to CNTK.
func checkBrackets(file, text string) error {
	sc := &scanner{s: text, line: 1, file: file}
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; c {
		case '\n':
			sc.line++
		case '"', '\'':
			end := sc.quoteEnd(sc.i)
			if end < 0 {
				if c == '"' {
					return sc.errorf(sc.line, "unterminated string")
				}
				break
			}
			sc.line += strings.Count(sc.s[sc.i:end], "\n")
			sc.i = end
		case '[', '{', '(':
			if err := sc.skipBrackets(); err != nil {
				return err
			}
			continue
		case '#', '/':
			if sc.skipComment() {
				continue
			}
		}
		sc.i++
	}
	return nil
}

// The body parser below runs only on text checkBrackets accepted, so its brackets match.

// skipSpace skips blanks and comments, and newlines and the separators in seps too.
func (sc *scanner) skipSpace(seps string) {
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '\n' && strings.IndexByte(seps, '\n') >= 0:
			sc.line++
		case isBlank(c) || c != '\n' && strings.IndexByte(seps, c) >= 0:
		case (c == '#' || c == '/') && sc.skipComment():
			continue
		default:
			return
		}
		sc.i++
	}
}

// recordSeps separate the assignments of a block, as in CNTK; listSeps the items of a list.
const (
	recordSeps = "\n;,"
	listSeps   = "\n,:"
)

// entries splits the bodies of a dictionary into assignments, CNTK's way: an assignment is
// `name = value`; a name followed by a bracket takes the bracket as its value (so a macro
// definition `F(x) = [ ... ]` leaves a harmless entry); a bare word is a flag set to true.
func (v *Value) parseEntries() {
	for _, b := range v.bodies {
		sc := &scanner{s: b.text, line: b.line, file: b.file, inBlock: b.inBlock}
		for {
			sc.skipSpace(recordSeps)
			if sc.i >= len(sc.s) {
				break
			}
			start, line := sc.i, sc.line
			// the name runs to '=', an opening bracket or quote, or the record's end
			for sc.i < len(sc.s) {
				c := sc.s[sc.i]
				if c == '=' || c == '[' || c == '{' || c == '(' || c == '"' || c == '\n' || c == ';' || c == ',' {
					break
				}
				if (c == '#' || c == '/') && sc.comment(sc.i) >= 0 {
					break
				}
				sc.i++
			}
			key := strings.TrimSpace(sc.s[start:sc.i])
			if sc.i >= len(sc.s) || sc.s[sc.i] != '=' && sc.s[sc.i] != '[' && sc.s[sc.i] != '{' && sc.s[sc.i] != '(' && sc.s[sc.i] != '"' {
				if key != "" {
					v.entries = append(v.entries, &Entry{Key: key, Line: line,
						Value: &Value{Kind: Scalar, Text: "true", Line: line, parent: v, cfg: v.cfg, file: b.file}})
				}
				continue
			}
			if sc.s[sc.i] == '=' {
				sc.i++
			}
			val := sc.value(v)
			if key != "" {
				v.entries = append(v.entries, &Entry{Key: key, Value: val, Line: line})
			}
		}
	}
}

// value parses a value: a block, a list, a string or unquoted text to the end of the record;
// blocks and strings followed by ':' make a list.
func (sc *scanner) value(parent *Value) *Value {
	for sc.i < len(sc.s) && isBlank(sc.s[sc.i]) {
		sc.i++
	}
	// a block may open on the next line
	if sc.i < len(sc.s) && (sc.s[sc.i] == '\n' || sc.comment(sc.i) >= 0) {
		save, saveLine := sc.i, sc.line
		sc.skipSpace("\n")
		if sc.i >= len(sc.s) || strings.IndexByte("[{(", sc.s[sc.i]) < 0 {
			sc.i, sc.line = save, saveLine
		}
	}
	v := sc.single(parent, recordSeps)
	if v.Kind == Scalar && !v.Quoted {
		return v
	}
	save, saveLine := sc.i, sc.line
	for sc.i < len(sc.s) && isBlank(sc.s[sc.i]) {
		sc.i++
	}
	if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
		sc.i, sc.line = save, saveLine
		return v
	}
	list := &Value{Kind: Array, Line: v.Line, parent: parent, cfg: parent.cfg, file: sc.file, items: []*Value{v}, parsed: true}
	for sc.i < len(sc.s) && sc.s[sc.i] == ':' {
		sc.i++
		sc.skipSpace("\n")
		if sc.i >= len(sc.s) {
			break
		}
		list.items = append(list.items, sc.single(parent, listSeps+";"))
		save, saveLine = sc.i, sc.line
		for sc.i < len(sc.s) && isBlank(sc.s[sc.i]) {
			sc.i++
		}
		if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
			sc.i, sc.line = save, saveLine
		}
	}
	return list
}

// single parses one value ending at a separator in seps.
func (sc *scanner) single(parent *Value, seps string) *Value {
	line := sc.line
	v := &Value{Kind: Scalar, Line: line, parent: parent, cfg: parent.cfg, file: sc.file}
	if sc.i >= len(sc.s) {
		return v
	}
	switch c := sc.s[sc.i]; c {
	case '[', '{', '(':
		start := sc.i
		sc.skipBrackets() // cannot fail: checkBrackets passed
		v.Kind = Dict
		if c == '(' {
			v.Kind = Array
		}
		v.Text = sc.s[start+1 : sc.i-1]
		v.bodies = []span{{text: v.Text, line: line, file: sc.file, inBlock: true}}
		return v
	case '"', '\'':
		if end := sc.quoteEnd(sc.i); end >= 0 {
			v.Text, v.Quoted = sc.s[sc.i+1:end], true
			sc.line += strings.Count(sc.s[sc.i:end], "\n")
			sc.i = end + 1
			return v
		}
	}
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if strings.IndexByte(seps, c) >= 0 {
			break
		}
		if c == '#' || c == '/' {
			if sc.comment(sc.i) >= 0 {
				break
			}
		}
		switch c {
		case '[', '{', '(':
			sc.skipBrackets()
			continue
		case '"', '\'':
			if end := sc.quoteEnd(sc.i); end >= 0 {
				sc.line += strings.Count(sc.s[sc.i:end], "\n")
				sc.i = end
			}
		}
		sc.i++
	}
	v.Text = strings.TrimSpace(sc.s[start:sc.i])
	return v
}

// parseItems splits a list's body at ':', ',' and newlines, as CNTK's arrays.
func (v *Value) parseItems() {
	for _, b := range v.bodies {
		sc := &scanner{s: b.text, line: b.line, file: b.file, inBlock: b.inBlock}
		for {
			sc.skipSpace(listSeps)
			if sc.i >= len(sc.s) {
				break
			}
			v.items = append(v.items, sc.single(v.parent, listSeps))
		}
	}
}

// Entries returns a dictionary's assignments in file order (then the defines' at the top
// level), or nil for other kinds. The block's text is split into assignments on the first
// call.
func (v *Value) Entries() []*Entry {
	if v == nil || v.Kind != Dict {
		return nil
	}
	if !v.parsed {
		v.parsed = true
		v.parseEntries()
	}
	return v.entries
}

// Items returns a list's elements, or nil for other kinds.
func (v *Value) Items() []*Value {
	if v == nil || v.Kind != Array {
		return nil
	}
	if !v.parsed {
		v.parsed = true
		v.parseItems()
	}
	return v.items
}

// Get returns the value of key in dictionary v, or nil. Keys compare case-insensitively and
// the last assignment wins, except that blocks assigned to one name one after the other are
// merged into one (CNTK's rule, which lets a define add to a block).
func (v *Value) Get(key string) *Value {
	es := v.Entries()
	last := -1
	for i := len(es) - 1; i >= 0; i-- {
		if strings.EqualFold(es[i].Key, key) {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	w := es[last].Value
	if w.Kind != Dict {
		return w
	}
	if m := v.merged[last]; m != nil {
		return m
	}
	first := last
	for i := last - 1; i >= 0; i-- {
		if !strings.EqualFold(es[i].Key, key) {
			continue
		}
		if es[i].Value.Kind != Dict {
			break
		}
		first = i
	}
	if first == last {
		return w
	}
	var bodies []span
	for _, e := range es[first : last+1] {
		if strings.EqualFold(e.Key, key) {
			bodies = append(bodies, e.Value.bodies...)
		}
	}
	if v.merged == nil {
		v.merged = map[int]*Value{}
	}
	m := &Value{Kind: Dict, Text: w.Text, Line: w.Line, parent: v, cfg: v.cfg, file: w.file, bodies: bodies}
	v.merged[last] = m
	return m
}

// lookup resolves a variable name: at the top level first, where CNTK resolves every
// variable (it substitutes a top-level block's variables from the top level when the block is
// first used, so `deviceId = $DeviceId$` inside a block means the top-level DeviceId), then,
// for a name the top level lacks (which CNTK rejects), from the scope around v outward.
func (v *Value) lookup(name string) *Value {
	if v.cfg != nil && v.cfg.Root != nil {
		if w := v.cfg.Root.Get(name); w != nil {
			return w
		}
	}
	for d := v.parent; d != nil; d = d.parent {
		if w := d.Get(name); w != nil {
			return w
		}
	}
	return nil
}

// String returns a scalar's text with $name$ references substituted. A reference that cannot be
// resolved, or that names a block, is an error naming the line.
func (v *Value) String() (string, error) {
	budget := maxSubstitutions
	return v.expand(0, &budget)
}

// maxSubstitutions bounds the $name$ references one value may expand, so that references
// that double at each level cannot take exponential time.
const maxSubstitutions = 10000

// varForbidden are the characters that end a variable name without closing it (CNTK's list).
const varForbidden = ",/<>?;':\"[]{}\\|!@#%^&*()+=~` \t\n"

// expand substitutes the `$name$` references of v's text: a '$' followed by a letter or '_'
// and then by a name closed by '$'. Any other '$' is an ordinary character.
func (v *Value) expand(depth int, budget *int) (string, error) {
	if v.Kind != Scalar {
		return "", v.errorf(ErrConfig, "expected a single value, found a %s", v.kindName())
	}
	s := v.Text
	if !strings.Contains(s, "$") {
		return s, nil
	}
	if depth > 32 {
		return "", v.errorf(ErrConfig, "$...$ references nest too deeply (a cycle?)")
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := -1
		if i+1 < len(s) && (isLetter(s[i+1]) || s[i+1] == '_') {
			if k := strings.IndexAny(s[i+1:], "$"+varForbidden); k >= 0 && s[i+1+k] == '$' {
				j = k
			}
		}
		if j < 0 {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		name := s[i+1 : i+1+j]
		b.WriteString(s[:i])
		if *budget--; *budget < 0 || b.Len() > 1<<20 {
			return "", v.errorf(ErrConfig, "$...$ references expand too far")
		}
		w := v.lookup(name)
		switch {
		case w != nil:
			t, err := w.expand(depth+1, budget)
			if err != nil {
				return "", err
			}
			b.WriteString(t)
		case strings.EqualFold(name, "ConfigDir") && v.cfg != nil:
			b.WriteString(v.cfg.Dir)
		default:
			return "", v.errorf(ErrConfig, "$%s$ is not defined (set it in the file or define it: %s=VALUE)", name, name)
		}
		s = s[i+2+j:]
	}
}

func (v *Value) kindName() string {
	switch v.Kind {
	case Dict:
		return "[ ] block"
	case Array:
		return "( ) list"
	}
	return "value"
}

func (v *Value) errorf(sentinel error, format string, args ...any) error {
	return &Error{File: v.file, Line: v.Line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// resolve follows a scalar that is exactly one `$name$` reference to a block it names, so
// that `reader = $myReader$` works.
func (v *Value) resolve() *Value {
	for i := 0; i < 32 && v.Kind == Scalar && !v.Quoted; i++ {
		t := v.Text
		if len(t) < 3 || t[0] != '$' || t[len(t)-1] != '$' || strings.Count(t, "$") != 2 {
			return v
		}
		w := v.lookup(t[1 : len(t)-1])
		if w == nil {
			return v
		}
		v = w
	}
	return v
}
