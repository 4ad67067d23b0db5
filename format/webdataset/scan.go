package webdataset

import (
	"archive/tar"
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
}

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

// scan reads every header.
func (s *scanner) scan() error {
	sr := io.NewSectionReader(s.ra, 0, s.size)
	tr := tar.NewReader(sr)
	s.byExt = map[string]int32{}
	var hdrPos int64 // where the next header starts
	var curKey string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s.headerError(hdrPos, err)
		}
		off, _ := sr.Seek(0, io.SeekCurrent)
		if hdr.Size < 0 || hdr.Size > s.size-off {
			return s.memberError(off, hdr.Name, fmt.Errorf("%w: the header declares %d bytes of data; the archive ends at byte %d", ErrTruncated, hdr.Size, s.size))
		}
		hdrPos = off + (hdr.Size+511)&^511
		if hdr.Typeflag == tar.TypeGNUSparse || hasSparse(hdr) {
			return s.memberError(off, hdr.Name, fmt.Errorf("%w: a sparse tar member (its data is not stored in one piece)", ErrUnsupported))
		}
		if !isRegular(hdr.Typeflag) || isMeta(hdr.Name) {
			s.skipped++
			continue
		}
		key, ext, ok := SplitName(hdr.Name)
		if !ok {
			s.skipped++
			continue
		}
		if hdr.Size > s.maxMember {
			return s.memberError(off, hdr.Name, fmt.Errorf("%w: a member of %d bytes (limit %d: option max_member)", ErrTooLarge, hdr.Size, s.maxMember))
		}
		ext = strings.ToLower(ext)
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
			return s.memberError(off, hdr.Name, fmt.Errorf("%w: sample %q has a second member of extension %q", ErrFormat, key, ext))
		}
		s.inSample[st] = true
		if s.stats[st].kind == kindNpy {
			if err := s.npyHeader(s.stats[st], hdr.Name, off, hdr.Size); err != nil {
				return err
			}
		}
		s.members = append(s.members, member{off: off, size: hdr.Size, stream: st})
	}
	s.first = append(s.first, len(s.members))
	return nil
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
	h, err := s.parseNpy(name, off, size)
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
func (s *scanner) parseNpy(name string, off, size int64) (*npy.Header, error) {
	var h *npy.Header
	var err error
	if s.mem != nil {
		h, err = npy.ParseHeader(s.mem[off:off+size:off+size], "")
	} else {
		h, err = npy.ReadHeader(io.NewSectionReader(s.ra, off, size), "")
	}
	return checkNpy(h, err, func(at int64, e error) error { return s.memberError(off+at, name, e) }, size)
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
