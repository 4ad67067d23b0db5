package cntkconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config is a parsed configuration file.
type Config struct {
	// File is the name the configuration was parsed from.
	File string
	// Root is the top-level dictionary.
	Root *Value
	// Dir is the directory of File, the value of $ConfigDir$.
	Dir string
}

// ParseFile reads and parses the configuration file name. Each override is a `name=value`
// assignment applied at the top level after the file, as CNTK's command line does
// (`defMBSize=true`).
func ParseFile(name string, overrides ...string) (*Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data, overrides...)
}

// Parse parses a configuration held in data; name is used in error messages and for
// $ConfigDir$. Overrides are as for ParseFile.
func Parse(name string, data []byte, overrides ...string) (*Config, error) {
	cfg := &Config{File: name, Dir: filepath.Dir(name)}
	p := &parser{cfg: cfg, src: data, line: 1}
	root, err := p.dictBody(0, 1)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		op := &parser{cfg: &Config{File: "override " + o}, src: []byte(o), line: 1}
		d, err := op.dictBody(0, 0)
		if err != nil {
			return nil, err
		}
		for _, e := range d.Entries {
			e.Value.setParent(root)
			root.Entries = append(root.Entries, e)
		}
	}
	cfg.Root = root
	return cfg, nil
}

func (v *Value) setParent(p *Value) {
	v.parent = p
	for _, it := range v.Items {
		it.setParent(p)
	}
}

type parser struct {
	cfg  *Config
	src  []byte
	pos  int
	line int
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &Error{File: p.cfg.File, Line: line, Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// comment reports whether a comment starts at the current position.
func (p *parser) comment() bool {
	c := p.peek()
	if c == '#' {
		return true
	}
	if c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/' {
		return p.pos == 0 || isSpace(p.src[p.pos-1])
	}
	return false
}

func (p *parser) skipComment() {
	for p.pos < len(p.src) && p.src[p.pos] != '\n' {
		p.pos++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// skip skips white space and comments; with newlines false it stops at a newline.
func (p *parser) skip(newlines bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n':
			if !newlines {
				return
			}
			p.line++
			p.pos++
		case isSpace(c):
			p.pos++
		case p.comment():
			p.skipComment()
		default:
			return
		}
	}
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// dictBody parses assignments up to closer (0: end of input).
func (p *parser) dictBody(closer byte, line int) (*Value, error) {
	d := &Value{Kind: Dict, Line: line, cfg: p.cfg}
	for {
		p.skip(true)
		for p.peek() == ';' {
			p.pos++
			p.skip(true)
		}
		if p.pos >= len(p.src) {
			if closer != 0 {
				return nil, p.errorf(line, "%q opened here is never closed", opener(closer))
			}
			return d, nil
		}
		c := p.peek()
		if c == closer {
			p.pos++
			return d, nil
		}
		if !isKeyByte(c) {
			return nil, p.errorf(p.line, "expected a name, found %q", c)
		}
		start, kline := p.pos, p.line
		for p.pos < len(p.src) && isKeyByte(p.src[p.pos]) {
			p.pos++
		}
		key := string(p.src[start:p.pos])
		p.skip(false)
		if p.peek() != '=' {
			return nil, p.errorf(p.line, "expected '=' after %q", key)
		}
		p.pos++
		v, err := p.value(d, false)
		if err != nil {
			return nil, err
		}
		d.Entries = append(d.Entries, &Entry{Key: key, Value: v, Line: kline})
	}
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

// value parses the value after '=' or an array element.
func (p *parser) value(parent *Value, inArray bool) (*Value, error) {
	p.skip(true)
	v, err := p.single(parent, inArray)
	if err != nil || inArray {
		return v, err
	}
	// `a = [..]:[..]` without parentheses is an array too.
	if v.Kind != Scalar || v.Quoted {
		p.skip(false)
		if p.peek() == ':' {
			arr := &Value{Kind: Array, Line: v.Line, Items: []*Value{v}, parent: parent, cfg: p.cfg}
			for p.peek() == ':' {
				p.pos++
				p.skip(true)
				w, err := p.single(parent, true)
				if err != nil {
					return nil, err
				}
				arr.Items = append(arr.Items, w)
				p.skip(false)
			}
			return arr, nil
		}
	}
	return v, nil
}

func (p *parser) single(parent *Value, inArray bool) (*Value, error) {
	line := p.line
	switch c := p.peek(); c {
	case '[', '{':
		p.pos++
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		d, err := p.dictBody(closer, line)
		if err != nil {
			return nil, err
		}
		d.parent = parent
		return d, nil
	case '(':
		p.pos++
		arr := &Value{Kind: Array, Line: line, parent: parent, cfg: p.cfg}
		for {
			p.skip(true)
			if p.peek() == ')' && len(arr.Items) == 0 {
				p.pos++
				return arr, nil
			}
			if p.pos >= len(p.src) {
				return nil, p.errorf(line, "'(' opened here is never closed")
			}
			v, err := p.single(parent, true)
			if err != nil {
				return nil, err
			}
			arr.Items = append(arr.Items, v)
			p.skip(true)
			switch p.peek() {
			case ':':
				p.pos++
			case ')':
				p.pos++
				return arr, nil
			default:
				return nil, p.errorf(p.line, "expected ':' or ')' in the list opened at line %d", line)
			}
		}
	case '"', '\'':
		p.pos++
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] != c {
			if p.src[p.pos] == '\n' {
				p.line++
			}
			p.pos++
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf(line, "unterminated string")
		}
		text := string(p.src[start:p.pos])
		p.pos++
		return &Value{Kind: Scalar, Text: text, Quoted: true, Line: line, parent: parent, cfg: p.cfg}, nil
	case 0, '\n', ';':
		return &Value{Kind: Scalar, Line: line, parent: parent, cfg: p.cfg}, nil
	}
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '\n' || c == ';' || c == ']' || c == '}' || c == ')' || p.comment() || (inArray && c == ':') {
			break
		}
		p.pos++
	}
	text := strings.TrimSpace(string(p.src[start:p.pos]))
	return &Value{Kind: Scalar, Text: text, Line: line, parent: parent, cfg: p.cfg}, nil
}

// Get returns the value of key in dictionary v (the last assignment wins; keys compare
// case-insensitively), or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Dict {
		return nil
	}
	for i := len(v.Entries) - 1; i >= 0; i-- {
		if strings.EqualFold(v.Entries[i].Key, key) {
			return v.Entries[i].Value
		}
	}
	return nil
}

// lookup resolves a variable name from scope outward.
func (v *Value) lookup(name string) *Value {
	for d := v.parent; d != nil; d = d.parent {
		if w := d.Get(name); w != nil {
			return w
		}
	}
	return nil
}

// String returns a scalar's text with $name$ references substituted. A reference that cannot be
// resolved, or that names a dictionary, is an error naming the line.
func (v *Value) String() (string, error) {
	budget := maxSubstitutions
	return v.expand(0, &budget)
}

// maxSubstitutions bounds the $name$ references one value may expand, so that references
// that double at each level cannot take exponential time.
const maxSubstitutions = 10000

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
		j := strings.IndexByte(s[i+1:], '$')
		if j < 0 {
			b.WriteString(s)
			return b.String(), nil
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
			return "", v.errorf(ErrConfig, "$%s$ is not defined", name)
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
	file := ""
	if v.cfg != nil {
		file = v.cfg.File
	}
	return &Error{File: file, Line: v.Line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
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
