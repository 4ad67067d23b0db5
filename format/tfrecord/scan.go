package tfrecord

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/mlfeed/mlfeed"
)

// This file builds the record-offset index and infers the schema in one scan of the file.

// featStat is what the scan learns about one feature (or one feature list).
type featStat struct {
	name    string
	list    bool  // a SequenceExample feature list
	kind    kind  // kindNone until a record sets one
	kindRec int64 // the record that set kind
	first   int64 // first record that has the feature
	last    int64 // last record that has it
	length  int64 // context: its length while constant; lists: the entries' length while constant; -1 varies
	seq     bool  // context: a sequence of scalar samples (its length varies or it is absent somewhere)
}

// scanner is the state of the scan.
type scanner struct {
	name    string
	mode    string
	maxRec  int64
	offsets []int64  // start of every record, then the end of the last
	seqLen  []uint32 // samples of the sequence features of every record
	feats   map[string]*featStat
	order   []*featStat
	lists   bool // some record has feature_lists
	rec     int64
	recOff  int64
	// populate, if not nil, maps in the pages of a span of the data before the scan reads
	// it: one system call instead of a page fault per page.
	populate func(off, end int64)
}

// populateSpan is how far ahead the scan has the pages of a mapped file mapped in.
const populateSpan = 4 << 20

// recordError returns an error at the start of record rec, which starts at off.
func recordError(name string, rec, off int64, err error) error {
	if errors.Is(err, errWire) {
		err = fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return mlfeed.OffsetError(name, off, fmt.Sprintf("record %d", rec), err)
}

// readFrame reads the record at off of r (size bytes) into buf and checks its framing: the
// length against the data left and max, and both CRCs. It returns the record's data (in buf,
// grown as needed) and its end offset.
func readFrame(r io.Reader, off, size, max int64, buf []byte, name string, rec int64) ([]byte, int64, error) {
	var h [headerSize]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: %d bytes of a 12-byte record header", ErrTruncated, n))
		}
		return nil, 0, recordError(name, rec, off, err)
	}
	length := binary.LittleEndian.Uint64(h[:8])
	if MaskedCRC(h[:8]) != binary.LittleEndian.Uint32(h[8:]) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: length CRC mismatch (length field %d)", ErrFormat, length))
	}
	left := size - off - headerSize - footerSize
	if left < 0 || length > uint64(left) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: record of %d bytes, %d bytes left in the data", ErrTruncated, length, max64(left, 0)))
	}
	if length > uint64(max) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: record of %d bytes, more than the limit of %d (option max_record)", ErrTooLarge, length, max))
	}
	n := int(length)
	if cap(buf) < n+footerSize {
		buf = make([]byte, n+footerSize)
	}
	buf = buf[:n+footerSize]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: inside the record's data", ErrTruncated))
		}
		return nil, 0, recordError(name, rec, off, err)
	}
	data := buf[:n]
	if MaskedCRC(data) != binary.LittleEndian.Uint32(buf[n:]) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: data CRC mismatch", ErrFormat))
	}
	return data, off + headerSize + int64(n) + footerSize, nil
}

// checkFrame checks the framing of the record at the start of p, which starts at byte off of
// the data: the length against the bytes left and max, and both CRCs. It returns the record's
// data and the record's size with its framing.
func checkFrame(p []byte, off, max int64, name string, rec int64) ([]byte, int64, error) {
	if len(p) < headerSize {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: %d bytes of a 12-byte record header", ErrTruncated, len(p)))
	}
	length := binary.LittleEndian.Uint64(p)
	if MaskedCRC(p[:8]) != binary.LittleEndian.Uint32(p[8:]) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: length CRC mismatch (length field %d)", ErrFormat, length))
	}
	left := int64(len(p)) - headerSize - footerSize
	if left < 0 || length > uint64(left) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: record of %d bytes, %d bytes left in the data", ErrTruncated, length, max64(left, 0)))
	}
	if length > uint64(max) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: record of %d bytes, more than the limit of %d (option max_record)", ErrTooLarge, length, max))
	}
	n := int(length)
	data := p[headerSize : headerSize+n]
	if MaskedCRC(data) != binary.LittleEndian.Uint32(p[headerSize+n:]) {
		return nil, 0, recordError(name, rec, off, fmt.Errorf("%w: data CRC mismatch", ErrFormat))
	}
	return data, headerSize + int64(n) + footerSize, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// scanMem reads every record of data.
func (s *scanner) scanMem(data []byte) error {
	size := int64(len(data))
	var ahead int64 // the data is mapped in up to here
	for off := int64(0); off < size; {
		if s.populate != nil && off+headerSize > ahead {
			s.populate(off, min(off+populateSpan, size))
			ahead = off + populateSpan
		}
		s.offsets = append(s.offsets, off)
		s.seqLen = append(s.seqLen, 0)
		rec, n, err := checkFrame(data[off:], off, s.maxRec, s.name, s.rec)
		if err != nil {
			return err
		}
		s.recOff = off
		if s.mode != RecordsRaw {
			if err := s.record(rec); err != nil {
				return err
			}
		}
		off += n
		s.rec++
	}
	s.offsets = append(s.offsets, size)
	return nil
}

// scan reads every record of r (size bytes) from its start.
func (s *scanner) scan(r io.Reader, size int64) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	for off := int64(0); off < size; {
		s.offsets = append(s.offsets, off)
		s.seqLen = append(s.seqLen, 0)
		data, end, err := readFrame(br, off, size, s.maxRec, buf, s.name, s.rec)
		if err != nil {
			return err
		}
		buf = data[:cap(data)]
		s.recOff = off
		if s.mode != RecordsRaw {
			if err := s.record(data); err != nil {
				return err
			}
		}
		off = end
		s.rec++
	}
	s.offsets = append(s.offsets, size)
	return nil
}

// record notes the features of one record.
func (s *scanner) record(data []byte) error {
	var list func(key, fl []byte) error
	if s.mode != RecordsExample {
		list = s.featureList
	}
	has, err := walkRecord(data, s.context, list)
	if err != nil {
		return recordError(s.name, s.rec, s.recOff, err)
	}
	s.lists = s.lists || has
	return nil
}

func (s *scanner) stat(key []byte, list bool) (*featStat, error) {
	f, ok := s.feats[string(key)]
	if !ok {
		f = &featStat{name: string(key), list: list, first: s.rec, last: -1}
		if s.rec > 0 {
			f.seq = true // absent from the records before
		}
		s.feats[f.name] = f
		s.order = append(s.order, f)
	}
	if f.list != list {
		return nil, fmt.Errorf("%w: %q is both a context feature and a feature list", ErrUnsupported, key)
	}
	if f.last == s.rec {
		return nil, fmt.Errorf("%w: feature %q appears twice in the record", ErrFormat, key)
	}
	return f, nil
}

func (s *scanner) setKind(f *featStat, k kind) error {
	switch {
	case k == kindNone || k == f.kind:
	case f.kind == kindNone:
		f.kind, f.kindRec = k, s.rec
		if k == kindBytes && !f.list {
			f.seq = true // earlier occurrences had no values: nothing to count
		}
	default:
		return fmt.Errorf("%w: feature %q is a %s here, a %s in record %d", ErrFormat, f.name, k, f.kind, f.kindRec)
	}
	return nil
}

func (s *scanner) context(key, feat []byte) error {
	f, err := s.stat(key, false)
	if err != nil {
		return err
	}
	k, body, err := parseFeature(feat)
	if err != nil {
		return fmt.Errorf("feature %q: %w", key, err)
	}
	if err := s.setKind(f, k); err != nil {
		return err
	}
	n, err := countValues(k, body)
	if err != nil {
		return fmt.Errorf("feature %q: %w", key, err)
	}
	switch {
	case f.seq:
	case f.last < 0: // the first record
		f.length = n
	case f.last != s.rec-1 || n != f.length: // absent from some records, or a new length
		s.toSequence(f)
	}
	f.last = s.rec
	if f.seq {
		s.addSamples(n)
	}
	return nil
}

// toSequence makes f, until now the same length in every record from the first, a sequence
// of scalar samples: each record up to its last had f.length of them.
func (s *scanner) toSequence(f *featStat) {
	f.seq = true
	if f.length == 0 {
		return
	}
	for r := f.first; r <= f.last; r++ {
		s.seqLen[r] = max(s.seqLen[r], clamp32(f.length))
	}
}

func clamp32(n int64) uint32 {
	if n > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(n)
}

func (s *scanner) addSamples(n int64) {
	s.seqLen[s.rec] = max(s.seqLen[s.rec], clamp32(n))
}

func (s *scanner) featureList(key, fl []byte) error {
	f, err := s.stat(key, true)
	if err != nil {
		return err
	}
	if f.last < 0 {
		f.length = -2 // no entry seen yet
	}
	f.last = s.rec
	var entries int64
	err = walkList(fl, func(feat []byte) error {
		k, body, err := parseFeature(feat)
		if err != nil {
			return err
		}
		if err := s.setKind(f, k); err != nil {
			return err
		}
		n, err := countValues(k, body)
		if err != nil {
			return err
		}
		switch f.length {
		case -2:
			f.length = n
		case n, -1:
		default:
			f.length = -1
		}
		entries++
		return nil
	})
	if err != nil {
		return fmt.Errorf("feature list %q: %w", key, err)
	}
	s.addSamples(entries)
	return nil
}

// schema returns the streams the scan found, sorted by name within the context features and
// within the feature lists, and fills every record's length into lengths. Features that no
// record gives a kind are left out (they hold no value); their names are returned.
func (s *scanner) schema() (streams []mlfeed.Stream, fs []*featStat, skipped []string, lengths []int64) {
	nrec := s.rec
	if s.mode == RecordsRaw {
		lengths = mlfeed.Ones(int(nrec))
		return []mlfeed.Stream{{Name: "record", Storage: mlfeed.Dense, Type: mlfeed.Bytes, Dim: 1}}, nil, nil, lengths
	}
	sort.Slice(s.order, func(i, j int) bool {
		a, b := s.order[i], s.order[j]
		if a.list != b.list {
			return !a.list
		}
		return a.name < b.name
	})
	anyDense := false
	for _, f := range s.order {
		if !f.list && !f.seq && f.last != nrec-1 {
			s.toSequence(f)
		}
		if f.kind == kindNone {
			skipped = append(skipped, f.name)
			continue
		}
		st := mlfeed.Stream{Name: f.name, Storage: mlfeed.Dense, Type: elemType(f.kind), Dim: 1}
		switch {
		case f.list && f.length >= 0:
			st.Dim = int(f.length)
		case f.list:
			st.Dim = 0
		case !f.seq:
			st.Dim = int(f.length)
			anyDense = true
		}
		if st.Dim == 0 && (!f.list || f.length == 0) {
			st.Shape = []int{0} // always empty: a fixed size of zero
		}
		streams = append(streams, st)
		fs = append(fs, f)
	}
	lengths = make([]int64, nrec)
	for r := range lengths {
		lengths[r] = int64(s.seqLen[r])
		if anyDense && lengths[r] == 0 {
			lengths[r] = 1
		}
	}
	return streams, fs, skipped, lengths
}

func elemType(k kind) mlfeed.ElemType {
	switch k {
	case kindFloat:
		return mlfeed.Float32
	case kindInt64:
		return mlfeed.Int64
	}
	return mlfeed.Bytes
}
