package hdf5

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Object is a group or a dataset in a file.
type Object struct {
	f    *File
	o    *object
	path *pathNode
}

// pathNode is a path as a chain of names, so that the paths of a walk share their prefixes:
// a chain of nested groups takes memory in proportion to its length, not to its square.
type pathNode struct {
	parent *pathNode
	name   string // a member's name; for a node without a parent, a whole path ("/", "/a/b")
}

var rootPath = &pathNode{name: "/"}

func (p *pathNode) child(name string) *pathNode { return &pathNode{p, name} }

// String returns the path ("/a/b").
func (p *pathNode) String() string {
	var names []string
	for ; p.parent != nil; p = p.parent {
		names = append(names, p.name)
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(p.name, "/"))
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(names[i])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// Path returns the object's path from the root, "/" for the root group: the path it was
// reached by (a soft link's own path, as h5py names objects opened through one).
func (o *Object) Path() string { return o.path.String() }

// IsGroup reports whether the object is a group.
func (o *Object) IsGroup() bool { return o.o.isGroup() || o.o.addr == o.f.rootObj }

// IsDataset reports whether the object is a dataset.
func (o *Object) IsDataset() bool { return o.o.isDataset() }

// Address returns the file address of the object's header: two objects are the same object
// when their addresses are equal (hard links to one object, a group linking to an ancestor).
func (o *Object) Address() uint64 { return o.o.addr }

// Root returns the root group.
func (f *File) Root() (*Object, error) {
	o, err := f.object(f.rootObj)
	if err != nil {
		return nil, err
	}
	return &Object{f, o, rootPath}, nil
}

// Get returns the object at path ("/" or "" for the root; "a/b" or "/a/b"), following soft
// links as HDF5 (and h5py) do: a soft link's path is taken from the root when it starts with
// "/", else from the group holding the link, and at most maxSoftLinks soft links are followed
// on the way. An external link is an error wrapping ErrUnsupported.
func (f *File) Get(path string) (*Object, error) {
	root, err := f.Root()
	if err != nil {
		return nil, err
	}
	if strings.Trim(path, "/.") == "" {
		return root, nil
	}
	budget := maxSoftLinks
	o, err := f.resolve(root, path, &budget)
	if err != nil {
		return nil, err
	}
	o.path = &pathNode{name: "/" + strings.TrimPrefix(path, "/")}
	return o, nil
}

// maxSoftLinks is the number of soft links one lookup follows at most: libhdf5's default
// (H5L_NUM_LINKS, 16), beyond which it reports "too many links" as this package does.
const maxSoftLinks = 16

// LinkKind tells a hard link from a soft or external one.
type LinkKind uint8

// Kinds of links.
const (
	// HardLink names an object by the address of its header.
	HardLink LinkKind = iota
	// SoftLink names an object by a path in the same file.
	SoftLink
	// ExternalLink names an object by a path in another file (never followed here).
	ExternalLink
	// UserDefinedLink is a link of a type an application registered with HDF5 (65 to 255,
	// but 64), whose meaning only that application knows (never followed here, as h5py
	// does not follow one it has no handler for).
	UserDefinedLink
)

func (k LinkKind) String() string {
	return [...]string{"hard link", "soft link", "external link", "user-defined link"}[k]
}

// link is one member of a group.
type link struct {
	name   string
	kind   LinkKind
	addr   uint64 // hard link: the object's header
	target string // soft link: a path; external link: "FILE:PATH"; user-defined: "type N"
	at     uint64 // where the link is stored, for errors
}

// linkSet is a group's members sorted by name.
type linkSet struct {
	links  []link
	byName map[string]int
}

// storeKey names where a group keeps its members: groups that share storage (a forged file)
// share one linkSet, read once.
type storeKey struct {
	kind uint8 // 1: symbol table (B-tree, heap); 2: dense links (heap, name index); 3: in the header
	a, b uint64
}

// storeOf returns the key of the storage of the group o's members.
func (f *File) storeOf(o *object) storeKey {
	for _, m := range o.msgs {
		c := &cursor{b: m.data}
		switch m.typ {
		case msgSymbolTable:
			return storeKey{1, c.addr(f.offSize), c.addr(f.offSize)}
		case msgLinkInfo:
			c.u8()
			if c.u8()&1 != 0 {
				c.skip(8)
			}
			if heap, names := c.addr(f.offSize), c.addr(f.offSize); !c.bad && heap != undef {
				return storeKey{2, heap, names}
			}
		}
	}
	if o.addr == f.rootObj && f.rootBtree != 0 && f.rootBtree != undef && !o.isGroup() {
		return storeKey{1, f.rootBtree, f.rootHeap}
	}
	return storeKey{3, o.addr, 0}
}

// members returns the group o's members, read once per storage.
func (f *File) members(o *object) (*linkSet, error) {
	key := f.storeOf(o)
	f.mu.Lock()
	s, ok := f.groups[key]
	f.mu.Unlock()
	if ok {
		return s, nil
	}
	ls, err := f.links(o)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].name < ls[j].name })
	s = &linkSet{links: ls, byName: make(map[string]int, len(ls))}
	for i, l := range ls {
		if _, dup := s.byName[l.name]; !dup {
			s.byName[l.name] = i
		}
	}
	f.mu.Lock()
	f.groups[key] = s
	f.mu.Unlock()
	return s, nil
}

// Children returns the names of the group's members, sorted (as h5py's keys(): hard, soft and
// external links alike).
func (o *Object) Children() ([]string, error) {
	s, err := o.f.members(o.o)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(s.links))
	for i, l := range s.links {
		names[i] = l.name
	}
	return names, nil
}

// Child returns the group's member name, following a soft link (see File.Get).
func (o *Object) Child(name string) (*Object, error) {
	budget := maxSoftLinks
	c, err := o.f.step(o, name, &budget)
	if err != nil {
		return nil, err
	}
	c.path = o.path.child(name)
	return c, nil
}

// step returns the group g's member name, following soft links (budget counts them down).
func (f *File) step(g *Object, name string, budget *int) (*Object, error) {
	if !g.IsGroup() {
		return nil, fmt.Errorf("%w: %s in %s is not a group", ErrNotFound, g.Path(), f.name)
	}
	s, err := f.members(g.o)
	if err != nil {
		return nil, err
	}
	i, ok := s.byName[name]
	if !ok {
		return nil, &noMember{g, name}
	}
	l := s.links[i]
	switch l.kind {
	case SoftLink:
		if *budget--; *budget < 0 {
			return nil, f.errAt(l.at, "soft link "+g.path.child(name).String(), ErrFormat, "more than %d soft links followed (a loop of soft links?)", maxSoftLinks)
		}
		return f.resolve(g, l.target, budget)
	case ExternalLink:
		return nil, f.errAt(l.at, "external link "+g.path.child(name).String(), ErrUnsupported, "external link to %s (not followed)", l.target)
	case UserDefinedLink:
		return nil, f.errAt(l.at, "user-defined link "+g.path.child(name).String(), ErrUnsupported, "user-defined link of %s (not followed)", l.target)
	}
	o, err := f.object(l.addr)
	if err != nil {
		return nil, err
	}
	return &Object{f, o, g.path.child(name)}, nil
}

// noMember is step's error for a name a group lacks: its message names the group's path,
// built only when the message is asked for (a walk resolves every soft link).
type noMember struct {
	g    *Object
	name string
}

func (e *noMember) Error() string {
	return fmt.Sprintf("%v: no object %q in group %s of %s", ErrNotFound, e.name, e.g.Path(), e.g.f.name)
}

func (e *noMember) Unwrap() error { return ErrNotFound }

// resolve follows path from the group g (from the root when it starts with "/").
func (f *File) resolve(g *Object, path string, budget *int) (*Object, error) {
	cur := g
	if strings.HasPrefix(path, "/") {
		r, err := f.Root()
		if err != nil {
			return nil, err
		}
		cur = r
	}
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." {
			continue
		}
		f.work.Add(1)
		next, err := f.step(cur, part, budget)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return &Object{f, cur.o, cur.path}, nil
}

// WalkEntry is one link Walk meets.
type WalkEntry struct {
	path   *pathNode
	Kind   LinkKind // hard, soft or external
	Target string   // a soft link's path; an external link's "FILE:PATH"; a user-defined link's "type N"
	// Object is the object a hard link leads to (named by the path first met) or the object a
	// soft link resolves to; nil for external links and links that lead nowhere.
	Object *Object
	// Seen is true when a hard link leads to an object met before (a second link, a link back
	// to an ancestor): Walk does not enter it again, and Object is named by the path it was
	// first met under.
	Seen bool
	// Err says why a soft link leads nowhere (it dangles and wraps ErrNotFound, passes through
	// an external link, or is one of a loop of soft links) or why an external link is not
	// followed (ErrUnsupported).
	Err error
}

// Path returns the link's path from the root (built on each call, in time proportional to
// its depth).
func (e WalkEntry) Path() string { return e.path.String() }

// Name returns the link's name in its group.
func (e WalkEntry) Name() string { return e.path.name }

// SkipGroup, returned by Walk's function for a group, skips the group's members.
var SkipGroup = errors.New("hdf5: skip this group")

// Walk calls fn for every link reachable from the root group, depth first with each group's
// members in name order (the order of h5py's visititems). Each object is visited once, by
// the address of its header: a second hard link to an object, or a link back to an ancestor,
// is reported (WalkEntry.Seen) but not entered, so that cycles and shared groups take work
// proportional to the file, not to the number of paths through it. Soft links are resolved
// (see Get) and reported, never entered (their targets are reached by hard links anyway);
// external links are reported and not followed. A group whose member storage another group
// shares is entered once. An error from fn (other than SkipGroup) ends the walk.
func (f *File) Walk(fn func(e WalkEntry) error) error {
	root, err := f.Root()
	if err != nil {
		return err
	}
	type frame struct {
		g     *Object
		links []link
		i     int
	}
	seen := map[uint64]*pathNode{root.o.addr: rootPath}
	stores := map[storeKey]bool{}
	var stack []*frame
	enter := func(g *Object) error {
		key := f.storeOf(g.o)
		if stores[key] {
			return nil
		}
		stores[key] = true
		s, err := f.members(g.o)
		if err != nil {
			return err
		}
		f.work.Add(uint64(len(s.links)))
		stack = append(stack, &frame{g: g, links: s.links})
		return nil
	}
	if err := enter(root); err != nil {
		return err
	}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if top.i == len(top.links) {
			stack = stack[:len(stack)-1]
			continue
		}
		l := top.links[top.i]
		top.i++
		e := WalkEntry{path: top.g.path.child(l.name), Kind: l.kind, Target: l.target}
		switch l.kind {
		case HardLink:
			if p, ok := seen[l.addr]; ok {
				o, err := f.object(l.addr)
				if err != nil {
					return err
				}
				e.Seen, e.Object = true, &Object{f, o, p}
				if err := fn(e); err != nil && err != SkipGroup {
					return err
				}
				continue
			}
			o, err := f.object(l.addr)
			if err != nil {
				return err
			}
			seen[l.addr] = e.path
			e.Object = &Object{f, o, e.path}
		case SoftLink:
			budget := maxSoftLinks
			t, err := f.resolve(top.g, l.target, &budget)
			if err == nil {
				t.path = e.path
				e.Object = t
			} else {
				e.Err = err
			}
		case ExternalLink:
			e.Err = f.errAt(l.at, "external link "+e.Path(), ErrUnsupported, "external link to %s (not followed)", l.target)
		case UserDefinedLink:
			e.Err = f.errAt(l.at, "user-defined link "+e.Path(), ErrUnsupported, "user-defined link of %s (not followed)", l.target)
		}
		err := fn(e)
		if err == SkipGroup {
			continue
		}
		if err != nil {
			return err
		}
		if l.kind == HardLink && e.Object.IsGroup() {
			if err := enter(e.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// links returns the members of a group object, in storage order.
func (f *File) links(o *object) ([]link, error) {
	var out []link
	for _, m := range o.msgs {
		switch m.typ {
		case msgSymbolTable:
			c := &cursor{b: m.data}
			bt, heap := c.addr(f.offSize), c.addr(f.offSize)
			if c.bad {
				return nil, f.errAt(m.addr, "symbol table message", ErrFormat, "short message")
			}
			if bt == undef || heap == undef {
				return nil, f.errAt(m.addr, "symbol table message", ErrFormat, "undefined address of the group's B-tree or local heap")
			}
			return f.symbolTable(bt, heap)
		case msgLink:
			l, err := f.parseLink(m.data, m.addr)
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		case msgLinkInfo:
			err := f.denseObjects(m, 8, 5, 4, "link", func(data []byte, heap uint64) error {
				l, err := f.parseLink(data, heap)
				if err == nil {
					out = append(out, l)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 && o.addr == f.rootObj && f.rootBtree != 0 && f.rootBtree != undef {
		return f.symbolTable(f.rootBtree, f.rootHeap)
	}
	return out, nil
}

// parseLink decodes a link message stored at at: a hard, soft or external link.
func (f *File) parseLink(b []byte, at uint64) (l link, err error) {
	c := &cursor{b: b, base: at}
	if v := c.u8(); v != 1 {
		return l, f.errAt(at, "link message", ErrFormat, "link message version %d", v)
	}
	flags := c.u8()
	typ := uint8(0)
	if flags&0x08 != 0 {
		typ = c.u8()
	}
	if flags&0x04 != 0 {
		c.skip(8)
	}
	if flags&0x10 != 0 {
		c.u8()
	}
	n := int(c.uint(1 << (flags & 3)))
	name := c.bytes(n)
	if c.bad {
		return l, f.errAt(at, "link message", ErrFormat, "short link message")
	}
	l = link{name: string(name), at: at}
	switch typ {
	case 0:
		l.addr = c.addr(f.offSize)
		if !c.bad && l.addr == undef {
			return l, f.errAt(at, "link message", ErrFormat, "hard link %q to an undefined address", name)
		}
	case 1:
		l.kind = SoftLink
		l.target = string(c.bytes(int(c.u16())))
	case 64:
		l.kind = ExternalLink
		v := c.bytes(int(c.u16()))
		if len(v) > 0 {
			parts := strings.SplitN(string(v[1:]), "\x00", 3)
			if len(parts) >= 2 {
				l.target = parts[0] + ":" + parts[1]
			}
		}
		if l.target == "" && !c.bad {
			return l, f.errAt(at, "link message", ErrFormat, "external link %q without a file and path", name)
		}
	default:
		l.kind = UserDefinedLink
		l.target = fmt.Sprintf("type %d", typ)
		c.bytes(int(c.u16())) // the link's value, whose meaning its application knows
	}
	if c.bad {
		return l, f.errAt(at, "link message", ErrFormat, "short link message")
	}
	return l, nil
}

// symbolTable lists an old-style group: a version 1 B-tree of symbol table nodes whose names
// are in a local heap.
func (f *File) symbolTable(btree, heapAddr uint64) ([]link, error) {
	hb, err := f.read(heapAddr, uint64(8+2*f.lenSize+f.offSize), "local heap")
	if err != nil {
		return nil, err
	}
	c := &cursor{b: hb, base: heapAddr}
	if string(c.bytes(4)) != "HEAP" {
		return nil, f.errAt(heapAddr, "local heap", ErrFormat, "no HEAP signature")
	}
	c.skip(4)
	dsize := c.uint(f.lenSize)
	c.uint(f.lenSize)
	daddr := c.addr(f.offSize)
	if err := f.undefAt(daddr, heapAddr, "local heap"); err != nil {
		return nil, err
	}
	heap, err := f.read(daddr, dsize, "local heap data")
	if err != nil {
		return nil, err
	}
	var out []link
	// Every node and symbol table node is visited once, and the entries of all of them must
	// fit in the file side by side: nodes that overlap or are shared cannot multiply the work.
	visited := map[uint64]bool{}
	entries := uint64(0)
	maxEntries := uint64(f.size)/uint64(f.lenSize+f.offSize) + 1
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 64 || visited[addr] {
			return f.errAt(addr, "group B-tree", ErrFormat, "B-tree nodes form a loop, are shared or nest too deep")
		}
		visited[addr] = true
		f.work.Add(1)
		hdr, err := f.read(addr, uint64(8+2*f.offSize), "group B-tree node")
		if err != nil {
			return err
		}
		c := &cursor{b: hdr, base: addr}
		if string(c.bytes(4)) != "TREE" {
			if string(hdr[:4]) == "SNOD" && depth > 0 {
				return f.symbolNode(addr, heap, &out) // visited once, as marked above
			}
			return f.errAt(addr, "group B-tree node", ErrFormat, "no TREE signature")
		}
		if t := c.u8(); t != 0 {
			return f.errAt(addr, "group B-tree node", ErrFormat, "B-tree node type %d in a group", t)
		}
		level := int(c.u8())
		n := int(c.u16())
		if entries += uint64(n); entries > maxEntries {
			return f.errAt(addr, "group B-tree node", ErrFormat, "more B-tree entries than the file can hold")
		}
		f.work.Add(uint64(n))
		body, err := f.read(addr+uint64(len(hdr)), uint64(n)*uint64(f.lenSize+f.offSize)+uint64(f.lenSize), "group B-tree node")
		if err != nil {
			return err
		}
		bc := &cursor{b: body, base: addr + uint64(len(hdr))}
		for i := 0; i < n; i++ {
			bc.uint(f.lenSize)
			child := bc.addr(f.offSize)
			if err := f.undefAt(child, bc.pos()-uint64(f.offSize), "group B-tree node"); err != nil {
				return err
			}
			if level > 0 {
				if err := walk(child, depth+1); err != nil {
					return err
				}
			} else {
				if visited[child] {
					return f.errAt(child, "symbol table node", ErrFormat, "symbol table node listed twice")
				}
				visited[child] = true
				if err := f.symbolNode(child, heap, &out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(btree, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func (f *File) symbolNode(addr uint64, heap []byte, out *[]link) error {
	hdr, err := f.read(addr, 8, "symbol table node")
	if err != nil {
		return err
	}
	if string(hdr[:4]) != "SNOD" {
		return f.errAt(addr, "symbol table node", ErrFormat, "no SNOD signature")
	}
	n := int(le(hdr[6:8]))
	esz := 2*f.offSize + 24
	if f.lenSize != f.offSize {
		esz = f.lenSize + f.offSize + 24
	}
	// the entries of all symbol table nodes must fit in the file side by side
	if uint64(len(*out)+n) > uint64(f.size)/uint64(esz)+1 {
		return f.errAt(addr, "symbol table node", ErrFormat, "more symbol table entries than the file can hold")
	}
	f.work.Add(uint64(n))
	b, err := f.read(addr+8, uint64(n*esz), "symbol table node")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: addr + 8}
	for i := 0; i < n; i++ {
		at := c.pos()
		noff := c.uint(f.lenSize)
		obj := c.addr(f.offSize)
		cache := c.u32()
		c.skip(4)
		scratch := c.bytes(16)
		name, ok := heapString(heap, noff)
		if !ok {
			return f.errAt(at, "symbol table entry", ErrFormat, "name offset %d outside the local heap", noff)
		}
		l := link{name: name, addr: obj, at: at}
		switch {
		case cache == 2: // a soft link: its path is in the local heap
			l.kind = SoftLink
			voff := le(scratch[:4])
			if l.target, ok = heapString(heap, voff); !ok {
				return f.errAt(at, "symbol table entry", ErrFormat, "soft link %q: path offset %d outside the local heap", name, voff)
			}
		case obj == undef:
			return f.errAt(at, "symbol table entry", ErrFormat, "entry %q has an undefined object address", name)
		}
		*out = append(*out, l)
	}
	return nil
}

// heapString returns the NUL-terminated string at offset off of a local heap.
func heapString(heap []byte, off uint64) (string, bool) {
	if off >= uint64(len(heap)) {
		return "", false
	}
	s := heap[off:]
	if k := bytes.IndexByte(s, 0); k >= 0 {
		s = s[:k]
	}
	return string(s), true
}

// denseObjects walks the objects a link info or attribute info message (m) keeps in dense
// storage: the fractal heap and the v2 B-tree of names (records of recType, the heap ID at
// byte idAt) that it names, calling fn with each object's bytes. skip is the size of the
// field the message's flag bit 0 adds; what ("link", "attribute") names the storage in errors.
// A message with no heap has no objects there.
func (f *File) denseObjects(m message, skip int, recType uint8, idAt int, what string, fn func(data []byte, heap uint64) error) error {
	c := &cursor{b: m.data}
	c.u8()
	if c.u8()&1 != 0 {
		c.skip(skip)
	}
	heap, names := c.addr(f.offSize), c.addr(f.offSize)
	if c.bad {
		return f.errAt(m.addr, what+" info message", ErrFormat, "short message")
	}
	if heap == undef {
		return nil
	}
	if err := f.undefAt(names, m.addr, what+" info message"); err != nil {
		return err
	}
	h, err := f.fheap(heap)
	if err != nil {
		return err
	}
	return f.btree2(names, recType, func(rec []byte) error {
		if len(rec) < idAt+h.idLen {
			return f.errAt(names, what+" name index", ErrFormat, "record of %d bytes", len(rec))
		}
		data, err := f.heapObject(h, rec[idAt:idAt+h.idLen])
		if err != nil {
			return err
		}
		return fn(data, heap)
	})
}
