package webdataset

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
)

// member is one tar member of the index: where its data lies and which stream it is.
type member struct {
	off    int64 // data offset in the (decompressed) archive
	size   int64 // data bytes
	stream int32 // index into the schema's streams
}

// streamStat is what the scan learns about one stream.
type streamStat struct {
	name  string
	kind  kind
	typ   mlfeed.ElemType // kindNpy: the dtype's element type
	shape []int           // kindNpy: the shape of every member (or its rank when vary)
	vary  bool            // kindNpy: 1-d arrays of varying length
	where string          // kindNpy: the member that set typ and shape, for errors
	last  []byte          // kindNpy: the header bytes of the last member parsed
	lastH *npy.Header     // kindNpy: last, parsed
	heads int             // kindNpy: headers parsed (1: every member has the same header)
	raw   int64           // kindNpy: where every member's data starts (> 0), for RawSamples
	swap  int             // kindNpy: the element size when the data is big-endian
}

// scanner reads the tar headers of an archive once and builds the index.
type scanner struct {
	name      string
	field     string // suffix for error fields: " (decompressed offset)" for compressed data
	decode    string
	maxMember int64
	mem       []byte      // the archive in memory, or nil: read npy headers from ra
	ra        io.ReaderAt // the archive
	size      int64
	members   []member
	first     []int // per sample, its first member; then len(members)
	keys      []byte
	keyEnd    []int
	stats     []*streamStat // in order of first appearance
	byExt     map[string]int32
	skipped   int
	inSample  []bool // per stream of stats: the current sample has it
	win       []byte // the archive's bytes [winOff, winOff+len(win)), read with ReadAt
	winOff    int64
	// populate, if not nil, maps in the pages of a span of the archive before the scan reads
	// them.
	populate func(off, end int64)
}

// windowSize is how much of an archive read with ReadAt (object storage, a decompressed
// temporary file) the scan reads at a time: headers are read from the window, not one
// ReadAt each. (A variable for the tests.)
var windowSize int64 = 1 << 20

// window returns the archive's bytes [off, off+n), n at most windowSize, from the window,
// reading a new one when they lie outside; nil when the archive ends before off+n. The bytes
// are valid until the next call.
func (s *scanner) window(off, n int64) []byte {
	if off < 0 || n > windowSize || off+n > s.size {
		return nil
	}
	if off < s.winOff || off+n > s.winOff+int64(len(s.win)) {
		if s.win == nil {
			s.win = make([]byte, min(windowSize, s.size))
		}
		s.win = s.win[:min(int64(cap(s.win)), s.size-off)]
		k, _ := s.ra.ReadAt(s.win, off)
		s.win, s.winOff = s.win[:k], off
		if int64(k) < n {
			return nil
		}
	}
	return s.win[off-s.winOff : off-s.winOff+n]
}

// populateSpan is how far ahead the scan has the pages of a mapped file mapped in.
const populateSpan = 4 << 20

// memberError is an error at byte off of the archive, in the named member.
func (s *scanner) memberError(off int64, name string, err error) error {
	return mlfeed.OffsetError(s.name, off, "member "+quote(name)+s.field, err)
}

// quote quotes a member name for messages, at most 200 bytes of it.
func quote(name string) string {
	if len(name) > 200 {
		name = name[:200] + "..."
	}
	return fmt.Sprintf("%q", name)
}

// header is what the scan needs of one tar member.
type header struct {
	name string
	typ  byte
	size int64
	off  int64 // where the data starts
	next int64 // where the next header starts
	pax  bool  // a PAX record describes a sparse file
}

// scan reads every header. Plain ustar, GNU and V7 headers are parsed here; a header chain
// with extended headers (PAX, GNU long names) or base-256 sizes is left to archive/tar.
func (s *scanner) scan() error {
	s.byExt = map[string]int32{}
	var curKey string
	var ahead int64 // the mapping is populated up to here
	for pos := int64(0); ; {
		var h header
		var blk *[512]byte
		if pos >= s.size {
			break // an archive without its end-of-archive blocks, as tarfile reads it
		}
		if s.mem != nil && pos+512 <= s.size {
			if s.populate != nil && pos+512 > ahead {
				ahead = min(pos+populateSpan, s.size)
				s.populate(pos, ahead)
			}
			blk = (*[512]byte)(s.mem[pos : pos+512])
		} else if b := s.window(pos, 512); b != nil {
			blk = (*[512]byte)(b)
		} else {
			return mlfeed.OffsetError(s.name, pos, "tar header"+s.field, fmt.Errorf("%w: the archive ends inside a header", ErrTruncated))
		}
		if *blk == [512]byte{} {
			break // the end of the archive (tarfile stops at the first zero block)
		}
		ok, err := s.plainHeader(blk, pos, &h)
		if err != nil {
			return err
		}
		if !ok {
			if err := s.libHeader(pos, &h); err != nil {
				return err
			}
			if h.typ == 0xff {
				break // archive/tar saw the end
			}
		}
		if h.size < 0 || h.size > s.size-h.off {
			return s.memberError(h.off, h.name, fmt.Errorf("%w: the header declares %d bytes of data; the archive ends at byte %d", ErrTruncated, h.size, s.size))
		}
		pos = h.next
		if h.typ == tar.TypeGNUSparse || h.pax {
			return s.memberError(h.off, h.name, fmt.Errorf("%w: a sparse tar member (its data is not stored in one piece)", ErrUnsupported))
		}
		if !isRegular(h.typ) || isMeta(h.name) {
			s.skipped++
			continue
		}
		key, ext, ok := SplitName(h.name)
		if !ok {
			s.skipped++
			continue
		}
		if h.size > s.maxMember {
			return s.memberError(h.off, h.name, fmt.Errorf("%w: a member of %d bytes (limit %d: option max_member)", ErrTooLarge, h.size, s.maxMember))
		}
		ext = lower(ext)
		if len(s.first) == 0 || key != curKey {
			s.first = append(s.first, len(s.members))
			s.keys = append(s.keys, key...)
			s.keyEnd = append(s.keyEnd, len(s.keys))
			curKey = key
			clear(s.inSample)
		}
		st, ok := s.byExt[ext]
		if !ok {
			st = int32(len(s.stats))
			k := kindBytes
			if s.decode != DecodeNone {
				k = extKind(ext)
			}
			s.byExt[ext] = st
			s.stats = append(s.stats, &streamStat{name: ext, kind: k})
			s.inSample = append(s.inSample, false)
		}
		if s.inSample[st] {
			return s.memberError(h.off, h.name, fmt.Errorf("%w: sample %q has a second member of extension %q", ErrFormat, key, ext))
		}
		s.inSample[st] = true
		if s.stats[st].kind == kindNpy {
			if err := s.npyHeader(s.stats[st], h.name, h.off, h.size); err != nil {
				return err
			}
		}
		s.members = append(s.members, member{off: h.off, size: h.size, stream: st})
	}
	s.first = append(s.first, len(s.members))
	return nil
}

// lower returns s in lower case, without allocating when it already is (ASCII).
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// plainHeader parses the header block blk at pos when it stands alone: a ustar, GNU or V7
// header of a type other than the extended ones, with an octal size. It reports false,
// leaving the block to archive/tar, otherwise.
func (s *scanner) plainHeader(blk *[512]byte, pos int64, h *header) (bool, error) {
	typ := blk[156]
	magic := string(blk[257:265])
	posix := magic == "ustar\x0000"
	switch {
	case typ == tar.TypeXHeader || typ == tar.TypeXGlobalHeader || typ == tar.TypeGNULongName || typ == tar.TypeGNULongLink || typ == tar.TypeGNUSparse:
		return false, nil
	case !posix && magic != "ustar  \x00" && magic != "\x00\x00\x00\x00\x00\x00\x00\x00":
		return false, nil
	case blk[124]&0x80 != 0:
		return false, nil // base-256 size
	case posix && string(blk[508:512]) == "tar\x00":
		return false, nil // star's prefix field is shorter
	}
	sum, ok := octal(blk[148:156])
	if !ok || !checksumOK(blk, sum) {
		return false, nil // archive/tar says what is wrong
	}
	size, ok := octal(blk[124:136])
	if !ok {
		return false, nil
	}
	name := cstring(blk[0:100])
	if posix {
		if p := cstring(blk[345:500]); p != "" {
			name = p + "/" + name
		}
	}
	if typ == '\x00' && strings.HasSuffix(name, "/") {
		typ = tar.TypeDir // V7's directories
	}
	switch typ {
	case tar.TypeLink, tar.TypeSymlink, tar.TypeChar, tar.TypeBlock, tar.TypeDir, tar.TypeFifo:
		size = 0 // archive/tar and tarfile take no data for these whatever the size field says
	}
	*h = header{name: name, typ: typ, size: size, off: pos + 512}
	h.next = h.off + (size+511)&^511
	return true, nil
}

// libHeader reads the header chain at pos with archive/tar. h.typ is 0xff at the end of the
// archive.
func (s *scanner) libHeader(pos int64, h *header) error {
	sr := io.NewSectionReader(s.ra, pos, s.size-pos)
	hdr, err := tar.NewReader(sr).Next()
	if err == io.EOF {
		h.typ = 0xff
		return nil
	}
	if err != nil {
		return s.headerError(pos, err)
	}
	at, _ := sr.Seek(0, io.SeekCurrent)
	*h = header{name: hdr.Name, typ: hdr.Typeflag, size: hdr.Size, off: pos + at, pax: hasSparse(hdr)}
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		h.size = 0 // archive/tar consumed its records
	}
	h.next = (h.off + h.size + 511) &^ 511
	return nil
}

// octal parses a tar numeric field: octal digits, with leading spaces and ending in spaces or
// NULs.
func octal(f []byte) (int64, bool) {
	i := 0
	for i < len(f) && f[i] == ' ' {
		i++
	}
	var v int64
	digits := 0
	for ; i < len(f) && f[i] >= '0' && f[i] <= '7'; i++ {
		if v > (1<<62)>>3 {
			return 0, false
		}
		v = v<<3 | int64(f[i]-'0')
		digits++
	}
	for ; i < len(f); i++ {
		if f[i] != ' ' && f[i] != 0 {
			return 0, false
		}
	}
	return v, digits > 0
}

// checksumOK reports whether sum is the block's checksum, unsigned or (old tars) signed.
func checksumOK(blk *[512]byte, sum int64) bool {
	// The unsigned sum eight bytes at a time, in 16-bit lanes (64 words add at most
	// 64 * 2 * 255 to a lane), with the checksum field counted as spaces.
	var lanes uint64
	for i := 0; i < 512; i += 8 {
		x := binary.LittleEndian.Uint64(blk[i:])
		lanes += x&0x00ff00ff00ff00ff + x>>8&0x00ff00ff00ff00ff
	}
	u := int64(lanes&0xffff + lanes>>16&0xffff + lanes>>32&0xffff + lanes>>48)
	for _, c := range blk[148:156] {
		u += ' ' - int64(c)
	}
	if sum == u {
		return true
	}
	var signed int64
	for i, c := range blk {
		if i >= 148 && i < 156 {
			c = ' '
		}
		signed += int64(int8(c))
	}
	return sum == signed
}

// cstring returns the bytes of f up to its first NUL.
func cstring(f []byte) string {
	if i := bytes.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return string(f)
}

// headerError describes an error of tar.Reader.Next at the header at pos.
func (s *scanner) headerError(pos int64, err error) error {
	field := "tar header" + s.field
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mlfeed.OffsetError(s.name, pos, field, fmt.Errorf("%w: the archive ends inside a header or a member", ErrTruncated))
	case errors.Is(err, tar.ErrHeader):
		return mlfeed.OffsetError(s.name, pos, field, fmt.Errorf("%w: not a valid tar header (bad checksum or field)", ErrFormat))
	}
	return mlfeed.OffsetError(s.name, pos, field, fmt.Errorf("%w: %v", ErrFormat, err))
}

// isRegular reports whether a member is a regular file, as Python's TarInfo.isreg says (the
// reader turns V7's regular type with a name ending in '/' into a directory).
func isRegular(t byte) bool {
	return t == tar.TypeReg || t == '\x00' || t == tar.TypeCont
}

// hasSparse reports whether a PAX header describes a GNU sparse file.
func hasSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// npyHeader parses the header of a .npy member and checks it against the stream's.
func (s *scanner) npyHeader(st *streamStat, name string, off, size int64) error {
	h, err := s.parseNpy(st, name, off, size)
	if err != nil {
		return err
	}
	if st.where == "" {
		st.typ, st.shape, st.where = h.Type, slices.Clone(h.Shape), name
		return nil
	}
	if h.Type != st.typ {
		return s.memberError(off, name, fmt.Errorf("%w: stream %q holds %s arrays (member %q) and %s arrays; read with decode=none for their bytes", ErrUnsupported, st.name, st.typ, st.where, h.Type))
	}
	if !slices.Equal(h.Shape, st.shape) {
		if len(h.Shape) == 1 && len(st.shape) == 1 {
			st.vary = true
			return nil
		}
		return s.memberError(off, name, fmt.Errorf("%w: stream %q holds arrays of shape %v (member %q) and %v; only 1-d arrays may vary in length (read with decode=none for their bytes)", ErrUnsupported, st.name, st.shape, st.where, h.Shape))
	}
	return nil
}

// parseNpy parses the header of the .npy member whose data is at off, checking that the
// member holds the data it announces.
func (s *scanner) parseNpy(st *streamStat, name string, off, size int64) (*npy.Header, error) {
	fail := func(at int64, e error) error { return s.memberError(off+at, name, e) }
	if n := int64(len(st.last)); n > 0 && n <= size {
		// Members of one stream mostly share their header: compare the bytes, not parse them.
		var head []byte
		if s.mem != nil {
			head = s.mem[off : off+n]
		} else {
			head = s.window(off, n)
		}
		if bytes.Equal(head, st.last) {
			return checkNpy(st.lastH, nil, fail, size)
		}
	}
	var h *npy.Header
	var err error
	if s.mem != nil {
		h, err = npy.ParseHeader(s.mem[off:off+size:off+size], "")
	} else {
		if b := s.window(off, min(size, windowSize)); b != nil {
			h, err = npy.ParseHeader(b, "")
		}
		if h == nil && (err == nil || size > windowSize && errors.Is(err, mlfeed.ErrTruncated)) {
			h, err = npy.ReadHeader(io.NewSectionReader(s.ra, off, size), "")
		}
	}
	if h, err = checkNpy(h, err, fail, size); err != nil {
		return nil, err
	}
	if s.mem != nil {
		st.last = s.mem[off : off+h.DataOffset]
	} else {
		st.last = make([]byte, h.DataOffset)
		s.ra.ReadAt(st.last, off)
	}
	st.lastH = h
	st.heads++
	return h, nil
}

// checkNpy turns npy's errors into the reader's and checks that a member of size bytes holds
// the data h announces, of a type mlfeed holds as numbers.
func checkNpy(h *npy.Header, err error, fail func(at int64, err error) error, size int64) (*npy.Header, error) {
	if err != nil {
		var pe *mlfeed.PosError
		if errors.As(err, &pe) {
			return nil, fail(max(pe.Offset, 0), fmt.Errorf("npy %s: %w", pe.Field, pe.Err))
		}
		return nil, fail(0, err)
	}
	if h.Type == mlfeed.String {
		return nil, fail(0, fmt.Errorf("%w: a .npy member of unicode strings (dtype %q): read with decode=none for its bytes", ErrUnsupported, h.Descr))
	}
	n, _ := h.DataSize()
	if n > size-h.DataOffset {
		return nil, fail(h.DataOffset, fmt.Errorf("%w: the .npy header announces %d bytes of data; the member holds %d", ErrTruncated, n, size-h.DataOffset))
	}
	return h, nil
}

// schema returns the streams in name order, their stats, and the members renumbered to it.
func (s *scanner) schema() ([]mlfeed.Stream, []*streamStat) {
	order := make([]int, len(s.stats))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return s.stats[order[a]].name < s.stats[order[b]].name })
	renum := make([]int32, len(order))
	streams := make([]mlfeed.Stream, len(order))
	stats := make([]*streamStat, len(order))
	for _, st := range s.stats {
		if st.kind == kindNpy && st.heads == 1 && !fortran(st.lastH) && !st.lastH.Converted() {
			st.raw = st.lastH.DataOffset
			if st.lastH.BigEndian {
				st.swap = st.lastH.ItemSize
				if st.typ == mlfeed.Complex64 || st.typ == mlfeed.Complex128 {
					st.swap /= 2
				}
			}
		}
	}
	for to, from := range order {
		renum[from] = int32(to)
		stats[to] = s.stats[from]
		streams[to] = streamOf(s.stats[from])
	}
	for i := range s.members {
		s.members[i].stream = renum[s.members[i].stream]
	}
	return streams, stats
}

// fortran reports whether an array's Fortran order differs from C order.
func fortran(h *npy.Header) bool {
	n := 0
	for _, d := range h.Shape {
		if d > 1 {
			n++
		}
	}
	return h.Fortran && n > 1
}

// streamOf returns the stream a stat describes.
func streamOf(st *streamStat) mlfeed.Stream {
	out := mlfeed.Stream{Name: st.name, Storage: mlfeed.Dense, Dim: 1}
	switch st.kind {
	case kindBytes:
		out.Type = mlfeed.Bytes
	case kindText:
		out.Type = mlfeed.String
	case kindInt:
		out.Type = mlfeed.Int64
	case kindNpy:
		out.Type = st.typ
		switch {
		case st.vary:
			out.Dim = 0
		case len(st.shape) > 1:
			out.Shape = slices.Clone(st.shape)
			out.Dim = 1
			for _, d := range st.shape {
				out.Dim *= d
			}
		case len(st.shape) == 1:
			out.Dim = st.shape[0]
			if out.Dim == 0 {
				out.Shape = []int{0}
			}
		}
	}
	return out
}
