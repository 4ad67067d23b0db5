package mds

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/half"
)

// WriterOptions configures a Writer. The zero value writes what MDSWriter writes by default:
// shards of at most 64 MiB, not compressed, without hashes.
type WriterOptions struct {
	// SizeLimit is the most bytes a shard holds (before compression), as MDSWriter's
	// size_limit; a sample larger than it gets a shard of its own. Zero means
	// DefaultSizeLimit, negative no limit (one shard).
	SizeLimit int64
	// Compression is "" (none) or one of zstd, gz, snappy, with :LEVEL for all but snappy.
	Compression string
	// Hashes are the hash algorithms whose digests of each file index.json records (sorted, as
	// MDSWriter wants them): md5, sha1, sha224, sha256, sha384, sha512, sha3_*, xxh64.
	Hashes []string
	// Encodings chooses a column's encoding where the stream's type allows several: str
	// (default), json or str_decimal for text; str_int for int64; str_float for float64;
	// float16 for float32 (every value must be a float16 exactly); bytes (default), jpeg, png
	// or pil for bytes; list[jpeg], list[png], list[pil] or jpeg_array for sequences of bytes
	// (default: list[jpeg] or list[png], as the first value shows, once a sequence holds
	// several values before the first shard is written).
	Encodings map[string]string
}

// wcol is one column being written.
type wcol struct {
	name   string
	enc    string // "" until the first chunk decides (lists of bytes)
	size   int    // fixed size, 0 variable
	stream int    // the stream of its values
	shape  int    // the stream of its shapes (NAME.shape), or -1
	kind   kind
	typ    mlfeed.ElemType
	esize  int  // element size written (2 for float16)
	auto   bool // bytes of no encoding asked for: a list once a sequence holds several
}

// Writer writes an MDS data set into a directory. Close writes the last shard and index.json.
type Writer struct {
	dir    string
	schema mlfeed.Schema
	cols   []wcol
	nvar   int
	limit  int64
	codec  *codec
	comp   string
	hashes []string
	shards [][]kv
	body   []byte  // the current shard's samples, one after another
	ends   []int64 // where each of them ends in body
	size   int64   // the current shard's size so far, as MDSWriter counts it
	config []byte
	sample []byte
}

// NewWriter returns a writer of an MDS data set of schema into dir, which must exist (and
// should be empty: shard files of the same names are replaced).
func NewWriter(dir string, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	o := WriterOptions{}
	if opts != nil {
		o = *opts
	}
	w := &Writer{dir: dir, schema: schema, limit: o.SizeLimit}
	if w.limit == 0 {
		w.limit = DefaultSizeLimit
	}
	if w.limit >= 1<<32 {
		return nil, fmt.Errorf("%w: size limit %d: shards hold at most 2^32 bytes (offsets are uint32)", ErrUnsupported, w.limit)
	}
	if o.Compression != "" && o.Compression != "none" {
		c, err := codecOf(o.Compression)
		if err != nil {
			return nil, err
		}
		if _, err := c.compress(nil); err != nil {
			return nil, err
		}
		w.codec, w.comp = &c, o.Compression
	}
	if !sort.StringsAreSorted(o.Hashes) {
		return nil, fmt.Errorf("%w: hashes %q must be in sorted order (as MDSWriter wants)", ErrUnsupported, o.Hashes)
	}
	for i, h := range o.Hashes {
		if hashes[h] == nil {
			return nil, fmt.Errorf("%w: hash %q (mlfeed writes %s)", ErrUnsupported, h, hashNames)
		}
		if i > 0 && o.Hashes[i-1] == h {
			return nil, fmt.Errorf("%w: hash %q twice", ErrUnsupported, h)
		}
	}
	w.hashes = append([]string{}, o.Hashes...)
	if err := w.columns(o.Encodings); err != nil {
		return nil, err
	}
	return w, nil
}

// columns maps the schema's streams to columns, in name order as MDSWriter sorts them.
func (w *Writer) columns(encs map[string]string) error {
	byName := map[string]int{}
	for i, st := range w.schema.Streams {
		byName[st.Name] = i
	}
	shapeOf := map[int]int{}
	for i, st := range w.schema.Streams {
		if base, ok := strings.CutSuffix(st.Name, ShapeSuffix); ok {
			if j, ok := byName[base]; ok && isVarDense(&w.schema.Streams[j]) && st.Storage == mlfeed.Dense && st.Type.IsInteger() {
				shapeOf[j] = i
			}
		}
	}
	used := map[int]bool{}
	for _, s := range shapeOf {
		used[s] = true
	}
	for name := range encs {
		if j, ok := byName[name]; !ok || used[j] {
			return fmt.Errorf("%w: encodings names %q, which is no stream written as a column", ErrUnsupported, name)
		}
	}
	for i := range w.schema.Streams {
		if used[i] {
			continue
		}
		st := &w.schema.Streams[i]
		c := wcol{name: st.Name, stream: i, shape: -1, typ: st.Type, esize: st.Type.Size()}
		if s, ok := shapeOf[i]; ok {
			c.shape = s
		}
		if err := c.choose(st, encs[st.Name]); err != nil {
			return err
		}
		w.cols = append(w.cols, c)
	}
	sort.Slice(w.cols, func(a, b int) bool { return w.cols[a].name < w.cols[b].name })
	for _, c := range w.cols {
		if c.size == 0 {
			w.nvar++
		}
	}
	return nil
}

func isVarDense(st *mlfeed.Stream) bool {
	return st.Storage == mlfeed.Dense && st.Dim == 0 && st.Shape == nil
}

// choose sets the column's encoding from its stream and the one asked for.
func (c *wcol) choose(st *mlfeed.Stream, asked string) error {
	bad := func(why string) error {
		if asked != "" {
			return fmt.Errorf("%w: stream %q (%s): encoding %q: %s", ErrUnsupported, st.Name, st, asked, why)
		}
		return fmt.Errorf("%w: stream %q (%s): %s", ErrUnsupported, st.Name, st, why)
	}
	if st.Storage != mlfeed.Dense {
		return format.Needs(bad("MDS holds no sparse data"), format.ErrNeedsDense)
	}
	t := st.Type
	dtype := dtypeName(t)
	switch {
	case t == mlfeed.String:
		if st.Dim != 1 || st.Shape != nil {
			return bad("MDS holds one text per sample")
		}
		c.kind, c.enc = kText, "str"
		switch asked {
		case "", "str", "json", "str_decimal":
			if asked != "" {
				c.enc = asked
			}
		default:
			return bad("text is written as str, json or str_decimal")
		}
	case t == mlfeed.Bytes:
		if st.Dim != 1 || st.Shape != nil {
			return bad("MDS holds one bytes value per sample, or a list of them")
		}
		c.kind, c.enc, c.auto = kBytes, "bytes", asked == ""
		switch asked {
		case "", "bytes", "jpeg", "png", "pil":
			if asked != "" {
				c.enc = asked
			}
		case "list[jpeg]", "list[png]", "list[pil]":
			c.kind, c.enc = kList, asked
		case "jpeg_array", "jpegarray":
			c.kind, c.enc = kArray, asked
		default:
			return bad("bytes are written as bytes, jpeg, png, pil, list[jpeg], list[png], list[pil] or jpeg_array")
		}
	case dtype == "":
		return format.Needs(bad("MDS has no encoding of this type"), format.ErrNeedsType)
	case isVarDense(st):
		c.kind, c.enc = kNDShape, "ndarray:"+dtype
		if asked == "ndarray" {
			c.enc = asked // each sample's dtype before its shape
		} else if asked != "" && asked != c.enc {
			return bad("a sample of varying size is written as " + c.enc + " or ndarray")
		}
	case st.Dim == 1 && st.Shape == nil:
		c.kind, c.enc, c.size = kScalar, dtype, t.Size()
		switch {
		case asked == "" || asked == dtype:
		case asked == "int" && t == mlfeed.Int64, asked == "ndarray:"+dtype+":1":
			c.enc = asked
			if asked != "int" {
				c.kind = kNDFixed
			}
		case asked == "str_int" && t == mlfeed.Int64:
			c.kind, c.enc, c.size = kStrInt, asked, 0
		case asked == "str_float" && t == mlfeed.Float64:
			c.kind, c.enc, c.size = kStrFloat, asked, 0
		case asked == "float16" && t == mlfeed.Float32:
			c.kind, c.enc, c.size, c.esize = kFloat16, asked, 2, 2
		default:
			return bad("not an encoding of " + t.String())
		}
	default:
		n := 1
		var dims []string
		for _, d := range st.SampleShape() {
			if d < 1 {
				return bad("MDS ndarrays hold no axis of length 0")
			}
			n *= d
			dims = append(dims, strconv.Itoa(d))
		}
		c.kind, c.esize = kNDFixed, t.Size()
		c.enc = "ndarray:" + dtype + ":" + strings.Join(dims, ",")
		if asked == "ndarray:float16:"+strings.Join(dims, ",") && t == mlfeed.Float32 {
			c.enc, c.esize = asked, 2
		} else if asked != "" && asked != c.enc {
			return bad("a sample of fixed shape is written as " + c.enc)
		}
		c.size = n * c.esize
	}
	return nil
}

// dtypeName returns the MDS name of a numeric element type, or "".
func dtypeName(t mlfeed.ElemType) string {
	switch t {
	case mlfeed.Int8, mlfeed.Int16, mlfeed.Int32, mlfeed.Int64, mlfeed.Uint8, mlfeed.Uint16,
		mlfeed.Uint32, mlfeed.Uint64, mlfeed.Float32, mlfeed.Float64:
		return t.String()
	}
	return ""
}

// WriteChunk encodes c's sequences as samples.
func (w *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if err := w.decide(c); err != nil {
		return err
	}
	for q := 0; q < c.Sequences; q++ {
		if err := w.encode(c, q); err != nil {
			return err
		}
		n := int64(len(w.sample)) + 4
		if len(w.ends) > 0 && w.limit > 0 && w.limit < w.size+n {
			if err := w.flush(); err != nil {
				return err
			}
		}
		w.body = append(w.body, w.sample...)
		w.ends = append(w.ends, int64(len(w.body)))
		w.size += n
	}
	return nil
}

// decide makes a bytes column of no encoding asked for a list (list[jpeg] or list[png], as its
// first value shows) once a sequence of c holds several values, laying out again the samples
// of the shard not yet written; a list found after the first shard is written is an error. It
// makes the shards' configuration on the first chunk and whenever an encoding changes.
func (w *Writer) decide(c *mlfeed.Chunk) error {
	changed := w.config == nil
	for i := range w.cols {
		col := &w.cols[i]
		st := &w.schema.Streams[col.stream]
		if !col.auto || col.kind != kBytes {
			continue
		}
		d := &c.Streams[col.stream]
		single := true
		for q := 0; q < c.Sequences && single; q++ {
			single = d.SeqStart[q+1]-d.SeqStart[q] == 1
		}
		if single {
			continue
		}
		if len(w.shards) > 0 {
			return fmt.Errorf("%w: stream %q (%s): a sequence of several values after the first shard was written with one per sample (as %s): name a list encoding (--write-opt encodings=%s:list[jpeg])", ErrUnsupported, st.Name, st, col.enc, st.Name)
		}
		first := ""
		for _, v := range d.Values.Strings {
			if v != "" {
				first = v
				break
			}
		}
		switch {
		case first == "" || strings.HasPrefix(first, "\xff\xd8\xff"):
			col.enc = "list[jpeg]"
		case strings.HasPrefix(first, "\x89PNG"):
			col.enc = "list[png]"
		default:
			return fmt.Errorf("%w: stream %q (%s) has sequences of several values, which MDS holds as list[jpeg], list[png], list[pil] or jpeg_array: name one (--write-opt encodings=%s:list[pil])", ErrUnsupported, st.Name, st, st.Name)
		}
		w.relist(i)
		col.kind, changed = kList, true
	}
	if changed {
		w.nvar = 0
		for _, col := range w.cols {
			if col.size == 0 {
				w.nvar++
			}
		}
		old := int64(len(w.config))
		w.config = pyJSON(w.configKV())
		if old == 0 {
			old = -8 // the first: the shard's count and first offset
		}
		w.size += int64(len(w.config)) - old
	}
	return nil
}

// relist lays out again the buffered samples with bytes column ci as a list of its one value.
func (w *Writer) relist(ci int) {
	var body []byte
	var ends []int64
	from := int64(0)
	for _, e := range w.ends {
		smp := w.body[from:e]
		from = e
		// Find the column: the sizes of the variable columns, then the columns in order.
		v, off, at, size := 0, 4*w.nvar, 0, 0
		for i := range w.cols {
			sz := w.cols[i].size
			if sz == 0 {
				sz = int(binary.LittleEndian.Uint32(smp[4*v:]))
				if i == ci {
					at, size = v, sz
				}
				v++
			}
			if i == ci {
				break
			}
			off += sz
		}
		start := len(body)
		body = append(body, smp[:off]...)
		binary.LittleEndian.PutUint32(body[start+4*at:], uint32(size+12))
		body = binary.LittleEndian.AppendUint32(body, 0)
		body = binary.LittleEndian.AppendUint32(body, 1)
		body = binary.LittleEndian.AppendUint32(body, uint32(size))
		body = append(body, smp[off:]...)
		ends = append(ends, int64(len(body)))
		w.size += 12
	}
	w.body, w.ends = body, ends
}

// configKV is a shard's configuration as MDSWriter's get_config gives it.
func (w *Writer) configKV() []kv {
	var names, encs []string
	var sizes []any
	for _, c := range w.cols {
		names, encs = append(names, c.name), append(encs, c.enc)
		if c.size == 0 {
			sizes = append(sizes, nil)
		} else {
			sizes = append(sizes, c.size)
		}
	}
	var comp any
	if w.codec != nil {
		comp = w.comp
	}
	var limit any
	if w.limit > 0 {
		limit = w.limit
	}
	return []kv{{"column_encodings", encs}, {"column_names", names}, {"column_sizes", sizes},
		{"compression", comp}, {"format", "mds"}, {"hashes", w.hashes}, {"size_limit", limit}, {"version", 2}}
}

// encode builds sequence q's sample in w.sample.
func (w *Writer) encode(c *mlfeed.Chunk, q int) error {
	s := w.sample[:0]
	s = append(s, make([]byte, 4*w.nvar)...)
	v := 0
	for i := range w.cols {
		col := &w.cols[i]
		st := &w.schema.Streams[col.stream]
		d := &c.Streams[col.stream]
		a, b := d.SeqStart[q], d.SeqStart[q+1]
		start := len(s)
		if col.kind != kList && col.kind != kArray && b-a != 1 {
			if col.kind == kBytes {
				return fmt.Errorf("%w: stream %q: sequence %d has %d samples, and encoding %s holds one: name a list encoding (--write-opt encodings=%s:list[jpeg])", ErrUnsupported, col.name, q, b-a, col.enc, col.name)
			}
			return fmt.Errorf("%w: stream %q: sequence %d has %d samples; an MDS column holds one per sample", ErrUnsupported, col.name, q, b-a)
		}
		switch col.kind {
		case kScalar, kNDFixed:
			from, to := d.SampleRange(st, a)
			sz := col.typ.Size()
			if col.esize == 2 && col.typ == mlfeed.Float32 {
				var err error
				if s, err = appendFloat16(s, d.Values.Bytes[from*4:to*4], col.name); err != nil {
					return err
				}
			} else {
				s = append(s, d.Values.Bytes[from*sz:to*sz]...)
			}
		case kFloat16:
			var err error
			if s, err = appendFloat16(s, d.Values.Bytes[a*4:a*4+4], col.name); err != nil {
				return err
			}
		case kText, kBytes:
			s = append(s, d.Values.Strings[a]...)
		case kStrInt:
			s = strconv.AppendInt(s, d.Values.Int64At(int(a)), 10)
		case kStrFloat:
			s = appendPyFloat(s, d.Values.Float64At(int(a)))
		case kList, kArray:
			if col.kind == kList {
				s = binary.LittleEndian.AppendUint32(s, 0)
			}
			s = binary.LittleEndian.AppendUint32(s, uint32(b-a))
			for e := a; e < b; e++ {
				s = binary.LittleEndian.AppendUint32(s, uint32(len(d.Values.Strings[e])))
			}
			for e := a; e < b; e++ {
				s = append(s, d.Values.Strings[e]...)
			}
		case kNDShape:
			var err error
			if s, err = w.appendNDArray(s, c, col, q); err != nil {
				return err
			}
		}
		if col.size == 0 {
			n := len(s) - start
			if int64(n) >= 1<<32 {
				return fmt.Errorf("%w: stream %q: a value of %d bytes (MDS sizes are uint32)", ErrUnsupported, col.name, n)
			}
			binary.LittleEndian.PutUint32(s[4*v:], uint32(n))
			v++
		}
	}
	w.sample = s
	return nil
}

// appendNDArray appends a varying-size sample as an ndarray of its dtype with its shape.
func (w *Writer) appendNDArray(s []byte, c *mlfeed.Chunk, col *wcol, q int) ([]byte, error) {
	st := &w.schema.Streams[col.stream]
	d := &c.Streams[col.stream]
	from, to := d.SampleRange(st, d.SeqStart[q])
	n := to - from
	shape := []uint64{uint64(n)}
	if col.shape >= 0 {
		ds := &c.Streams[col.shape]
		sst := &w.schema.Streams[col.shape]
		if ds.SeqStart[q+1]-ds.SeqStart[q] != 1 {
			return nil, fmt.Errorf("%w: stream %q: sequence %d has no shape", ErrUnsupported, sst.Name, q)
		}
		a, b := ds.SampleRange(sst, ds.SeqStart[q])
		shape = shape[:0]
		count := uint64(1)
		for i := a; i < b; i++ {
			x := ds.Values.Int64At(i)
			if x < 1 {
				return nil, fmt.Errorf("%w: stream %q: sequence %d has an axis of length %d", ErrUnsupported, sst.Name, q, x)
			}
			shape = append(shape, uint64(x))
			count *= uint64(x)
		}
		if count != uint64(n) || len(shape) == 0 || len(shape) > maxShapeDims {
			return nil, fmt.Errorf("%w: stream %q: sequence %d has shape %v for %d values of %q", ErrFormat, sst.Name, q, shape, n, col.name)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: stream %q: sequence %d has no values, and MDS ndarrays hold at least one", ErrUnsupported, col.name, q)
	}
	mx := uint64(0)
	for _, x := range shape {
		mx = max(mx, x)
	}
	code := 0
	for code < 3 && mx >= 1<<(8<<code) {
		code++
	}
	if col.enc == "ndarray" {
		s = append(s, dtypeCode(dtypeName(col.typ)))
	}
	s = append(s, byte(len(shape)<<2|code))
	for _, x := range shape {
		switch code {
		case 0:
			s = append(s, byte(x))
		case 1:
			s = binary.LittleEndian.AppendUint16(s, uint16(x))
		case 2:
			s = binary.LittleEndian.AppendUint32(s, uint32(x))
		default:
			s = binary.LittleEndian.AppendUint64(s, x)
		}
	}
	sz := col.typ.Size()
	return append(s, d.Values.Bytes[from*sz:to*sz]...), nil
}

// appendFloat16 appends float32 values as float16, refusing any that float16 cannot hold.
func appendFloat16(s, v []byte, name string) ([]byte, error) {
	for i := 0; i+3 < len(v); i += 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(v[i:]))
		h, ok := half.FromFloat32(f)
		if !ok {
			return nil, fmt.Errorf("%w: stream %q: %v is not a float16 value (write it as float32)", mlfeed.ErrRange, name, f)
		}
		s = binary.LittleEndian.AppendUint16(s, h)
	}
	return s, nil
}

// appendPyFloat appends f as Python's str(float) writes it (repr: the shortest text that
// reads back as f).
func appendPyFloat(s []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(s, "nan"...)
	case math.IsInf(f, 1):
		return append(s, "inf"...)
	case math.IsInf(f, -1):
		return append(s, "-inf"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		t := strconv.AppendFloat(nil, f, 'e', -1, 64)
		// Python writes at least two exponent digits: 1e-05, 1e+16.
		if i := bytes.IndexByte(t, 'e'); i >= 0 && len(t)-i == 3 {
			t = append(t[:i+2], '0', t[i+2])
		}
		return append(s, t...)
	}
	t := strconv.AppendFloat(nil, f, 'f', -1, 64)
	if bytes.IndexByte(t, '.') < 0 {
		t = append(t, '.', '0')
	}
	return append(s, t...)
}

// flush writes the current shard.
func (w *Writer) flush() error {
	n := len(w.ends)
	hdr := 4 + 4*(n+1)
	start := uint64(hdr + len(w.config))
	if start+uint64(len(w.body)) >= 1<<32 {
		return fmt.Errorf("%w: a shard of more than 2^32 bytes (set a size limit)", ErrUnsupported)
	}
	raw := make([]byte, 0, int(start)+len(w.body))
	raw = binary.LittleEndian.AppendUint32(raw, uint32(n))
	raw = binary.LittleEndian.AppendUint32(raw, uint32(start))
	for _, e := range w.ends {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(start+uint64(e)))
	}
	raw = append(raw, w.config...)
	raw = append(raw, w.body...)
	base := fmt.Sprintf("shard.%05d.mds", len(w.shards))
	rawInfo := w.fileInfo(base, raw)
	var zipInfo any
	data, name := raw, base
	if w.codec != nil {
		z, err := w.codec.compress(raw)
		if err != nil {
			return err
		}
		name = base + "." + w.codec.ext
		data, zipInfo = z, w.fileInfo(name, z)
	}
	if err := os.WriteFile(filepath.Join(w.dir, name), data, 0o644); err != nil {
		return err
	}
	entry := append(w.configKV(), kv{"raw_data", rawInfo}, kv{"samples", n}, kv{"zip_data", zipInfo})
	sort.SliceStable(entry, func(a, b int) bool { return entry[a].k < entry[b].k })
	w.shards = append(w.shards, entry)
	w.body, w.ends = w.body[:0], w.ends[:0]
	w.size = 8 + int64(len(w.config))
	return nil
}

func (w *Writer) fileInfo(name string, data []byte) []kv {
	var hs []kv
	for _, h := range w.hashes {
		hs = append(hs, kv{h, hexDigest(h, data)})
	}
	return []kv{{"basename", name}, {"bytes", len(data)}, {"hashes", hs}}
}

// Close writes the last shard and index.json.
func (w *Writer) Close() error {
	if w.config == nil {
		empty := &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(w.schema.Streams))}
		for i := range empty.Streams {
			empty.Streams[i].SeqStart = []int64{0}
		}
		if err := w.decide(empty); err != nil {
			return err
		}
	}
	if len(w.ends) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	shards := make([]any, len(w.shards))
	for i, s := range w.shards {
		shards[i] = s
	}
	ix := pyJSON([]kv{{"shards", shards}, {"version", 2}})
	return os.WriteFile(filepath.Join(w.dir, IndexName), ix, 0o644)
}

// kv is one key of a JSON object written in order.
type kv struct {
	k string
	v any
}

// pyJSON writes v as Python's json.dumps does by default (", " and ": " separators, non-ASCII
// escaped): objects are []kv, lists []any, []string or []kv-lists.
func pyJSON(v any) []byte {
	var b bytes.Buffer
	writePy(&b, v)
	return b.Bytes()
}

func writePy(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case []kv:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStr(b, e.k)
			b.WriteString(": ")
			writePy(b, e.v)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case []string:
		l := make([]any, len(x))
		for i := range x {
			l[i] = x[i]
		}
		writePy(b, l)
	case string:
		writeStr(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	default:
		j, _ := json.Marshal(x)
		b.Write(j)
	}
}

// writeStr writes s as a JSON string with non-ASCII escaped (Python's ensure_ascii).
func writeStr(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7f:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
