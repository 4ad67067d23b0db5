package cntkconfig

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// Reader is a CNTK reader section mapped onto mlfeed: the deserializers (files, streams and
// reader parameters) and the minibatch engine's settings, with CNTK's defaults filled in.
type Reader struct {
	// Section is the path of the reader block, for example "Simple.reader".
	Section string
	// Line is the line where the reader block starts.
	Line int
	// Deserializers lists the data files and how to read them: one for the classic
	// `reader = [ readerType = ... ]` form, one or more for the composite form.
	Deserializers []Deserializer

	// Randomize is CNTK's `randomize` (default true; false or "none" turns it off).
	Randomize bool
	// RandomizationSeed is `randomizationSeed` (default 0).
	RandomizationSeed uint64
	// RandomizationWindow is `randomizationWindow`, in chunks or, with
	// SampleBasedRandomizationWindow, in samples. When the key is absent it is CNTK's automatic
	// value: 4 GiB / chunkSizeInBytes chunks for CTF (128 at the 32 MiB default), 128 chunks
	// for CBF, and 0 (the whole data set) for a sample-based window.
	RandomizationWindow int64
	// SampleBasedRandomizationWindow is `sampleBasedRandomizationWindow` (default false).
	SampleBasedRandomizationWindow bool
	// FrameMode is `frameMode` (default false): every sequence must be one sample.
	FrameMode bool
	// TraceLevel is `traceLevel` (default 1).
	TraceLevel int
	// Verbosity is `verbosity` (default 0), the randomizer's debug output level.
	Verbosity int
	// Precision is the element type of every stream: `precision` "float" (default) or
	// "double", looked up in the reader block and then the blocks around it.
	Precision mlfeed.ElemType
}

// Deserializer is one data file of a reader section.
type Deserializer struct {
	// Type is the reader or deserializer type as written ("CNTKTextFormatReader",
	// "CNTKTextFormatDeserializer", "CNTKBinaryReader", "CNTKBinaryFormatDeserializer").
	Type string
	// Format is the mlfeed format name: "ctf" or "cbf".
	Format string
	// File is the `file` value as written, with $name$ references substituted (as written
	// when they cannot be: see FileErr).
	File string
	// Path is File resolved: as is when it is absolute or exists relative to the working
	// directory (CNTK's rule), else relative to the configuration file's directory. When File
	// names a variable that is not defined, Path is File as written (no such file: the
	// error of a caller that opens Path without asking DataPath names the variable).
	Path string
	// FileErr, when not nil, is why the data file cannot be opened: `file` names a variable
	// that is not defined ($DataDir$, which CNTK's test driver sets on its command line), or
	// the file is in none of the places CNTK looks (the error lists them all; it wraps
	// fs.ErrNotExist). The section is mapped all the same, for callers that read other files
	// with its streams and options (mlfeed info --config cntk.cntk:test Test.txt): a value is
	// resolved only where it is used. DataPath returns Path or FileErr.
	FileErr error
	// Line is the line of the deserializer's block.
	Line int
	// Options are the reader options for format.Open: Inputs from the `input` block (name,
	// alias, dim, dense or sparse, definesMBSize, element type from Precision) and Params
	// holding the reader keys the section sets, under CNTK's names (precision when
	// "double": "float", CNTK's default, is left to the format's default,
	// skipSequenceIds, maxErrors, traceLevel, chunkSizeInBytes, keepDataInMemory, frameMode,
	// cacheIndex) with normalized values ("true"/"false", decimal integers). For CBF only
	// keepDataInMemory is passed: the binary reader has no use for the others; its input
	// entries may hold only an alias (Dim 0), renaming a stream the file describes.
	Options format.Options
}

// Names of the keys, in CNTK's spelling.
var (
	// engineKeys configure the randomizer and packer.
	engineKeys = []string{"randomize", "randomizationSeed", "randomizationWindow",
		"sampleBasedRandomizationWindow", "frameMode", "traceLevel", "verbosity",
		"multiThreadedDeserialization", "precision"}
	// paramKeys pass through to the deserializer as format.Options.Params.
	paramKeys = []string{"precision", "skipSequenceIds", "maxErrors", "traceLevel",
		"chunkSizeInBytes", "keepDataInMemory", "frameMode", "cacheIndex"}
	boolParams = map[string]bool{"skipSequenceIds": true, "keepDataInMemory": true,
		"frameMode": true, "cacheIndex": true}
	// cbfParams are the paramKeys the CBF reader takes; CNTK's binary reader accepts the
	// others (precision, traceLevel) but has no use for them.
	cbfParams        = map[string]bool{"keepDataInMemory": true}
	deserializerKeys = []string{"type", "module", "file", "input"}
	classicKeys      = []string{"readerType", "file", "input"}
	inputKeys        = []string{"dim", "format", "alias", "definesMBSize"}
	unsupportedKeys  = []string{"truncated", "truncationLength"}
	// ignoredKeys are accepted in reader sections and change nothing: CNTK's readers ignore
	// miniBatchMode (the legacy readers' partial or full last minibatch) and
	// nbruttsineachrecurrentiter, and prefetch only overlaps reading with training.
	ignoredKeys = []string{"miniBatchMode", "prefetch", "nbruttsineachrecurrentiter"}
)

// Reader returns the reader section named by section, mapped onto mlfeed. section may name a
// top-level block that holds a `reader` block ("Simple"), a reader block itself, or a dotted
// path ("train.reader"). An empty section selects the top-level `reader` block, else the only
// top-level block with a reader, else the first block named in `command` that has one.
func (c *Config) Reader(section string) (*Reader, error) {
	v, path, err := c.findReader(section)
	if err != nil {
		return nil, err
	}
	return c.mapReader(v, path)
}

func (c *Config) findReader(section string) (*Value, string, error) {
	if section != "" {
		v := c.Root
		for _, part := range strings.Split(section, ".") {
			w := v.Get(part)
			if w != nil {
				w = w.resolve()
			}
			if w == nil || w.Kind != Dict {
				return nil, "", fmt.Errorf("%s: %w: no block %q", c.File, ErrConfig, section)
			}
			v = w
		}
		if v.Get("readerType") != nil || v.Get("deserializers") != nil {
			return v, section, nil
		}
		// as in CNTK, a command block without a reader uses one from the blocks around it
		for d := v; d != nil; d = d.parent {
			if r := d.Get("reader"); r != nil && r.resolve().Kind == Dict {
				path := section + ".reader"
				if d != v {
					path = "reader"
				}
				return r.resolve(), path, nil
			}
		}
		return nil, "", fmt.Errorf("%s: %w: block %q has no reader block", c.File, ErrConfig, section)
	}
	if r := c.Root.Get("reader"); r != nil && r.resolve().Kind == Dict {
		return r.resolve(), "reader", nil
	}
	var names []string
	seen := map[string]bool{}
	for _, e := range c.Root.Entries() {
		k := strings.ToLower(e.Key)
		if e.Value.Kind == Dict && !seen[k] {
			if r := e.Value.Get("reader"); r != nil && r.resolve().Kind == Dict {
				names = append(names, e.Key)
				seen[k] = true
			}
		}
	}
	if len(names) == 1 {
		return c.findReader(names[0])
	}
	if cmd := c.Root.Get("command"); cmd != nil {
		var cmds []string
		if cmd.Kind == Array {
			for _, it := range cmd.Items() {
				if s, err := it.String(); err == nil {
					cmds = append(cmds, s)
				}
			}
		} else if s, err := cmd.String(); err == nil {
			cmds = strings.Split(s, ":")
		}
		for _, n := range cmds {
			for _, have := range names {
				if strings.EqualFold(strings.TrimSpace(n), have) {
					return c.findReader(have)
				}
			}
		}
	}
	if len(names) == 0 {
		return nil, "", fmt.Errorf("%s: %w: no reader block", c.File, ErrConfig)
	}
	return nil, "", fmt.Errorf("%s: %w: several blocks have a reader (%s); name one (FILE:SECTION)", c.File, ErrConfig, strings.Join(names, ", "))
}

func (c *Config) mapReader(v *Value, path string) (*Reader, error) {
	r := &Reader{Section: path, Line: v.Line, Randomize: true, TraceLevel: 1, Precision: mlfeed.Float32}
	composite := v.Get("deserializers") != nil
	// The reader types come first: a section for a reader mlfeed lacks is reported as such,
	// not by the keys it has.
	var items []*Value
	var types []string
	if composite {
		if rt := v.Get("readerType"); rt != nil {
			s, err := rt.String()
			if err != nil {
				return nil, err
			}
			if !strings.EqualFold(s, "CompositeDataReader") {
				return nil, rt.errorf(ErrConfig, "readerType %q cannot be combined with deserializers", s)
			}
		}
		ds := v.Get("deserializers").resolve()
		items = []*Value{ds}
		if ds.Kind == Array {
			items = ds.Items()
		}
		if len(items) == 0 {
			return nil, ds.errorf(ErrConfig, "deserializers is empty")
		}
		for i, it := range items {
			it = it.resolve()
			if it.Kind != Dict {
				return nil, it.errorf(ErrConfig, "a deserializer must be a [ ] or { } block")
			}
			items[i] = it
			t, err := typeOf(it, "type", deserializerFormats)
			if err != nil {
				return nil, err
			}
			types = append(types, t)
		}
	} else {
		t, err := typeOf(v, "readerType", readerFormats)
		if err != nil {
			return nil, err
		}
		types = append(types, t)
	}
	known := append(append([]string{}, engineKeys...), ignoredKeys...)
	if composite {
		known = append(known, "deserializers", "readerType")
	} else {
		known = append(known, classicKeys...)
		known = append(known, paramKeys...)
	}
	if err := checkKeys(v, "reader section", known); err != nil {
		return nil, err
	}
	if err := r.engine(v); err != nil {
		return nil, err
	}
	if composite {
		for i, it := range items {
			if err := checkKeys(it, "deserializer", append(append([]string{}, deserializerKeys...), paramKeys...)); err != nil {
				return nil, err
			}
			d, err := r.deserializer(c, it, v, types[i], deserializerFormats)
			if err != nil {
				return nil, err
			}
			r.Deserializers = append(r.Deserializers, d)
		}
	} else {
		d, err := r.deserializer(c, v, nil, types[0], readerFormats)
		if err != nil {
			return nil, err
		}
		r.Deserializers = append(r.Deserializers, d)
	}
	if v.Get("randomizationWindow") == nil {
		r.RandomizationWindow = 0
		if !r.SampleBasedRandomizationWindow {
			r.RandomizationWindow = autoWindow(r.Deserializers[0])
		}
	}
	return r, nil
}

// typeOf returns the reader or deserializer type that key of block d names, or an
// ErrUnsupported error naming a type mlfeed does not read.
func typeOf(d *Value, key string, formats map[string]string) (string, error) {
	typ, err := mustString(d, key)
	if err != nil {
		return "", err
	}
	if _, ok := formats[strings.ToLower(typ)]; ok {
		return typ, nil
	}
	var names []string
	for _, n := range []string{"CNTKTextFormatReader", "CNTKBinaryReader", "CNTKTextFormatDeserializer", "CNTKBinaryFormatDeserializer"} {
		if _, ok := formats[strings.ToLower(n)]; ok {
			names = append(names, n)
		}
	}
	return "", d.Get(key).errorf(ErrUnsupported, "unsupported reader type %q (supported: %s)", typ, strings.Join(names, ", "))
}

var (
	readerFormats       = map[string]string{"cntktextformatreader": "ctf", "cntkbinaryreader": "cbf"}
	deserializerFormats = map[string]string{"cntktextformatdeserializer": "ctf", "cntkbinaryformatdeserializer": "cbf"}
)

// autoWindow is CNTK's default window in chunks: 4 GiB / chunkSizeInBytes for CTF, 128 for CBF.
func autoWindow(d Deserializer) int64 {
	if d.Format != "ctf" {
		return 128
	}
	size := int64(32 << 20)
	if s, ok := d.Options.Params["chunkSizeInBytes"]; ok {
		size, _ = strconv.ParseInt(s, 10, 64)
	}
	if size <= 0 {
		return 128
	}
	w := (int64(4) << 30) / size
	if w < 1 {
		w = 1
	}
	return w
}

// engine reads the randomizer and packer keys of the reader block.
func (r *Reader) engine(v *Value) error {
	var err error
	if w := v.Get("randomize"); w != nil {
		s, err := w.String()
		if err != nil {
			return err
		}
		switch strings.ToLower(s) {
		case "none":
			r.Randomize = false
		case "auto":
			r.Randomize = true
		default:
			if r.Randomize, err = parseBool(w, s); err != nil {
				return err
			}
		}
	}
	if w := v.Get("randomizationSeed"); w != nil {
		n, err := uintValue(w, math.MaxUint64)
		if err != nil {
			return err
		}
		r.RandomizationSeed = n
	}
	if w := v.Get("randomizationWindow"); w != nil {
		n, err := uintValue(w, math.MaxInt64)
		if err != nil {
			return err
		}
		if n == 0 {
			return w.errorf(ErrConfig, "randomizationWindow must be positive")
		}
		r.RandomizationWindow = int64(n)
	}
	if r.SampleBasedRandomizationWindow, err = boolKey(v, "sampleBasedRandomizationWindow", false); err != nil {
		return err
	}
	if r.FrameMode, err = boolKey(v, "frameMode", false); err != nil {
		return err
	}
	if w := v.Get("traceLevel"); w != nil {
		n, err := uintValue(w, 1<<20)
		if err != nil {
			return err
		}
		r.TraceLevel = int(n)
	}
	if w := v.Get("verbosity"); w != nil {
		n, err := uintValue(w, 1<<20)
		if err != nil {
			return err
		}
		r.Verbosity = int(n)
	}
	if _, err := boolKey(v, "multiThreadedDeserialization", false); err != nil {
		return err
	}
	if w := lookupUp(v, "precision"); w != nil {
		s, err := w.String()
		if err != nil {
			return err
		}
		switch strings.ToLower(s) {
		case "float":
			r.Precision = mlfeed.Float32
		case "double":
			r.Precision = mlfeed.Float64
		default:
			return w.errorf(ErrConfig, "precision must be \"float\" or \"double\", not %q", s)
		}
	}
	return nil
}

// lookupUp finds key in v or the blocks around it.
func lookupUp(v *Value, key string) *Value {
	for d := v; d != nil; d = d.parent {
		if w := d.Get(key); w != nil {
			return w
		}
	}
	return nil
}

// deserializer maps a deserializer block (or a classic reader block) d; outer is the composite
// reader block whose traceLevel and frameMode pass down, or nil.
func (r *Reader) deserializer(c *Config, d, outer *Value, typ string, formats map[string]string) (Deserializer, error) {
	out := Deserializer{Type: typ, Line: d.Line}
	f := formats[strings.ToLower(typ)]
	out.Format = f
	fw := d.Get("file")
	if fw == nil || fw.Kind != Scalar {
		if _, err := mustString(d, "file"); err != nil {
			return out, err
		}
	}
	if file, err := fw.String(); err != nil {
		// Needed only to open the section's own files: an error then, not now.
		out.File, out.Path, out.FileErr = fw.Text, fw.Text, err
	} else {
		out.File = file
		out.Path, out.FileErr = findFile(file, c, fw)
	}
	params := map[string]string{}
	for _, k := range paramKeys {
		if f == "cbf" && !cbfParams[k] {
			continue
		}
		w := d.Get(k)
		if w == nil && outer != nil && (k == "traceLevel" || k == "frameMode") {
			w = outer.Get(k)
		}
		if k == "precision" {
			w = lookupUp(d, k)
		}
		if w == nil {
			continue
		}
		s, err := w.String()
		if err != nil {
			return out, err
		}
		switch {
		case k == "precision":
			// "float" is CNTK's default, the network's precision stated, not a request to
			// round silently: it is left out, so that the reader rounds as CNTK does, loudly.
			if s = strings.ToLower(s); s == "float" {
				continue
			}
		case boolParams[k]:
			b, err := parseBool(w, s)
			if err != nil {
				return out, err
			}
			s = strconv.FormatBool(b)
		default:
			n, err := uintValue(w, math.MaxInt64)
			if err != nil {
				return out, err
			}
			s = strconv.FormatUint(n, 10)
		}
		params[k] = s
	}
	if len(params) > 0 {
		out.Options.Params = params
	}
	if in := d.Get("input"); in != nil {
		var err error
		if out.Options.Inputs, err = r.inputs(in.resolve(), f == "cbf"); err != nil {
			return out, err
		}
	} else if f == "ctf" {
		return out, d.errorf(ErrConfig, "the CTF reader needs an input block")
	}
	return out, nil
}

// DataPath returns the path of the deserializer's data file, or FileErr: what a caller
// opening the section's own files (rather than files it names itself) must use.
func (d *Deserializer) DataPath() (string, error) {
	if d.FileErr != nil {
		return "", d.FileErr
	}
	return d.Path, nil
}

// findFile resolves a data file as resolvePath does, with the error for a file found in none
// of the places tried, which it lists (at w, the `file` value).
func findFile(file string, c *Config, w *Value) (string, error) {
	path := resolvePath(file, c.Dir)
	if _, err := os.Stat(path); err == nil || !os.IsNotExist(err) {
		return path, nil // a file there, or an error opening it will name
	}
	tried := []string{strconv.Quote(file)}
	if path != file {
		tried[0] += " (from the working directory)"
		tried = append(tried, strconv.Quote(path)+" (beside the configuration file)")
	}
	return path, &Error{File: w.file, Line: w.Line, Err: fs.ErrNotExist,
		Msg: fmt.Sprintf("data file %q not found; tried %s", file, strings.Join(tried, " and "))}
}

func resolvePath(file, dir string) string {
	if filepath.IsAbs(file) {
		return file
	}
	if _, err := os.Stat(file); err == nil {
		return file
	}
	return filepath.Join(dir, file)
}

// inputs maps an `input = [ name = [ dim, format, alias, definesMBSize ] ... ]` block.
// With renameOnly (CBF), an entry may hold only an alias, renaming a stream of the file.
func (r *Reader) inputs(in *Value, renameOnly bool) ([]mlfeed.Stream, error) {
	if in.Kind != Dict {
		return nil, in.errorf(ErrConfig, "input must be a [ ] or { } block")
	}
	if len(in.Entries()) == 0 {
		return nil, in.errorf(ErrConfig, "input is empty")
	}
	var out []mlfeed.Stream
	aliases := map[string]int{}
	defining := 0
	for _, e := range in.Entries() {
		v := e.Value.resolve()
		if v.Kind != Dict {
			return nil, v.errorf(ErrConfig, "input %q must be a [ ] or { } block", e.Key)
		}
		if err := checkKeys(v, "input "+e.Key, inputKeys); err != nil {
			return nil, err
		}
		st := mlfeed.Stream{Name: e.Key, Type: r.Precision}
		// CNTK's binary reader takes only an alias: the file describes its streams.
		if !renameOnly || v.Get("dim") != nil || v.Get("format") != nil {
			if err := shape(&st, v); err != nil {
				return nil, err
			}
		}
		alias := e.Key
		var err error
		if aw := v.Get("alias"); aw != nil {
			if alias, err = aw.String(); err != nil {
				return nil, err
			}
			if alias == "" {
				return nil, aw.errorf(ErrConfig, "input %q: alias is empty", e.Key)
			}
		}
		if line, dup := aliases[alias]; dup {
			return nil, v.errorf(ErrConfig, "input %q: alias %q is already used at line %d", e.Key, alias, line)
		}
		aliases[alias] = v.Line
		if alias != e.Key {
			st.Alias = alias
		}
		if st.DefinesMBSize, err = boolKey(v, "definesMBSize", false); err != nil {
			return nil, err
		}
		if st.DefinesMBSize {
			defining++
			if defining > 1 {
				return nil, v.errorf(ErrConfig, "only a single stream may define the minibatch size (definesMBSize)")
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// shape sets the dimension and storage of st from its input block v.
func shape(st *mlfeed.Stream, v *Value) error {
	dw := v.Get("dim")
	if dw == nil {
		return v.errorf(ErrConfig, "input %q has no dim", st.Name)
	}
	dim, err := uintValue(dw, math.MaxInt32)
	if err != nil {
		return err
	}
	if dim == 0 {
		return dw.errorf(ErrConfig, "input %q: dim must be positive", st.Name)
	}
	st.Dim = int(dim)
	fs, err := mustString(v, "format")
	if err != nil {
		return err
	}
	switch strings.ToLower(fs) {
	case "dense":
		st.Storage = mlfeed.Dense
	case "sparse":
		st.Storage = mlfeed.Sparse
	default:
		return v.Get("format").errorf(ErrConfig, "input %q: format must be dense or sparse, not %q", st.Name, fs)
	}
	return nil
}

// checkKeys reports the first key of block v that is not in known.
func checkKeys(v *Value, what string, known []string) error {
	for _, e := range v.Entries() {
		ok := false
		for _, k := range known {
			ok = ok || strings.EqualFold(k, e.Key)
		}
		if ok {
			continue
		}
		for _, k := range unsupportedKeys {
			if strings.EqualFold(k, e.Key) {
				return &Error{File: e.Value.file, Line: e.Line, Msg: fmt.Sprintf("%s: %q (truncated BPTT) is not supported", what, e.Key), Err: ErrUnsupported}
			}
		}
		if f := strings.Fields(e.Key); len(f) > 1 {
			for _, k := range known {
				if strings.EqualFold(k, f[0]) {
					return &Error{File: e.Value.file, Line: e.Line, Msg: fmt.Sprintf("expected '=' after %q", f[0]), Err: ErrSyntax}
				}
			}
		}
		msg := fmt.Sprintf("unknown key %q in %s", e.Key, what)
		if s := suggest(e.Key, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			sorted := append([]string{}, known...)
			sort.Strings(sorted)
			msg += " (known: " + strings.Join(sorted, ", ") + ")"
		}
		return &Error{File: e.Value.file, Line: e.Line, Msg: msg, Err: ErrConfig}
	}
	return nil
}

// suggest returns the known key closest to k when it is a likely misspelling.
func suggest(k string, known []string) string {
	best, bestD := "", 3
	for _, n := range known {
		if d := distance(strings.ToLower(k), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func mustString(v *Value, key string) (string, error) {
	w := v.Get(key)
	if w == nil {
		// `readerType CNTKTextFormatReader` reads as a flag named by the whole line
		for _, e := range v.Entries() {
			if f := strings.Fields(e.Key); len(f) > 1 && strings.EqualFold(f[0], key) {
				return "", &Error{File: e.Value.file, Line: e.Line, Msg: fmt.Sprintf("expected '=' after %q", f[0]), Err: ErrSyntax}
			}
		}
		return "", v.errorf(ErrConfig, "%q is required", key)
	}
	return w.String()
}

// parseBool accepts CNTK's spellings: t, true, 1 and f, false, 0, "" in any case.
func parseBool(w *Value, s string) (bool, error) {
	switch strings.ToLower(s) {
	case "t", "true", "1":
		return true, nil
	case "f", "false", "0", "":
		return false, nil
	}
	return false, w.errorf(ErrConfig, "expected a boolean (true or false), found %q", s)
}

func boolKey(v *Value, key string, def bool) (bool, error) {
	w := v.Get(key)
	if w == nil {
		return def, nil
	}
	s, err := w.String()
	if err != nil {
		return false, err
	}
	return parseBool(w, s)
}

func uintValue(w *Value, max uint64) (uint64, error) {
	s, err := w.String()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > max {
		return 0, w.errorf(ErrConfig, "expected a non-negative integer up to %d, found %q", max, s)
	}
	return n, nil
}
