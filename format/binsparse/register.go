package binsparse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
)

// hdf5Magic is the HDF5 superblock signature.
const hdf5Magic = "\x89HDF\r\n\x1a\n"

// ReadParams are the reader options (--opt key=value).
var ReadParams = []format.Param{
	{Name: "group", Doc: "/path: the matrix to read, as FILE:/path (default: the root's, else the file's only one, else every group's as a stream)"},
	{Name: "structure", Doc: "expand (default: both triangles of a symmetric, hermitian or skew-symmetric matrix) or keep (the stored triangle, marked)"},
	{Name: "name", Doc: "the stream's name (default: the descriptor's user key, else the group's name, else \"values\")"},
}

// WriteParams are the writer options (--write-opt key=value).
var WriteParams = []format.Param{
	{Name: "format", Doc: "DVEC, DMATR, DMATC, CVEC, CSR, CSC, DCSR, DCSC, COOR or COOC: convert before writing (default: CSR sparse, DMATR dense)"},
	{Name: "level", Doc: "deflate level 0..9 of HDF5 arrays, 0 unfiltered (default 1)"},
	{Name: "chunk", Doc: "HDF5 chunk size in bytes, whole elements (default 1048576)"},
	{Name: "shuffle", Doc: "true adds HDF5's shuffle filter before deflate (default false)"},
	{Name: "minimize", Doc: "true stores values and indices in the smallest exact types, as mtx2bsp does (default false)"},
	{Name: "expand", Doc: "true stores both triangles of structured matrices (default false)"},
	{Name: "group", Doc: "/path: where a single stream's matrix goes (default /)"},
}

func init() {
	format.Register(format.Format{
		Name:        "binsparse",
		KeepsShape:  true,
		Extensions:  []string{".bsp.h5", ".bsp.hdf5", ".bsp.npz"},
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Match:       match,
		MatchFile:   matchFile,
		Open:        openFormat,
		Create:      createFormat,
		Validate:    validateFormat,
	})
}

// match recognizes HDF5 files and NPZ files whose first entry is a Binsparse array.
func match(head []byte) bool {
	if bytes.HasPrefix(head, []byte(hdf5Magic)) {
		return true
	}
	if len(head) < 30 || string(head[:4]) != "PK\x03\x04" {
		return false
	}
	n := int(head[26]) | int(head[27])<<8
	if 30+n > len(head) {
		return false
	}
	name := string(head[30 : 30+n])
	if !strings.HasSuffix(name, ".npy") {
		return false
	}
	name = strings.TrimSuffix(name, ".npy")
	return name == "binsparse" || name == "values" || strings.HasPrefix(name, "indices_") || strings.HasPrefix(name, "pointers_to_")
}

// Reader options (--opt): group, structure, name.
func sourceOptions(opts *format.Options) (SourceOptions, string, error) {
	var so SourceOptions
	if opts == nil {
		return so, "", nil
	}
	params, err := format.NormalizeParams("binsparse", opts.Params, ReadParams)
	if err != nil {
		return so, "", err
	}
	so.Log = opts.Log
	so.Name = params["name"]
	switch v := params["structure"]; v {
	case "", "expand":
	case "keep":
		so.KeepStructure = true
	default:
		return so, "", fmt.Errorf("%w: binsparse --opt structure=%q: want expand or keep", format.ErrUsage, v)
	}
	return so, params["group"], nil
}

func openFormat(name string, opts *format.Options) (mlfeed.Source, error) {
	so, group, err := sourceOptions(opts)
	if err != nil {
		return nil, err
	}
	f, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	if _, inner := format.SplitPath(name); inner != "" {
		group = inner
	}
	if group == "" {
		gs, err := f.Matrices()
		if err != nil {
			f.Close()
			return nil, err
		}
		if len(gs) > 1 && gs[0] != "/" {
			return zipGroups(f, gs, &so)
		}
		if group, err = f.pick(name); err != nil {
			f.Close()
			return nil, err
		}
	}
	s, err := f.Source(group, &so)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.ownsF = true
	return s, nil
}

// matchFile looks deeper into a file that match accepted: an NPZ file is Binsparse by its
// first entry's name, an HDF5 file when one of its groups holds a Binsparse descriptor. Other
// HDF5 files (and those whose groups cannot be read) are left to the "hdf5" format.
func matchFile(r io.ReaderAt, size int64) bool {
	head := make([]byte, 4)
	if _, err := r.ReadAt(head, 0); err != nil {
		return false
	}
	if string(head) == "PK\x03\x04" {
		return true
	}
	f, err := h5.NewFile(r, size, "")
	if err != nil {
		return false
	}
	defer f.Close()
	gs, err := f.GroupsWith("binsparse")
	if err != nil {
		return false
	}
	for _, g := range gs {
		if _, ok, err := f.Attr(g, "binsparse"); err == nil && ok {
			return true
		}
	}
	return false
}

// zipGroups opens a file whose matrices all live in groups (as mlfeed writes several streams)
// as one source, one stream per group; they must have the same number of rows.
func zipGroups(f *File, groups []string, so *SourceOptions) (mlfeed.Source, error) {
	var srcs []mlfeed.Source
	for _, g := range groups {
		s, err := f.Source(g, so)
		if err != nil {
			f.Close()
			return nil, err
		}
		srcs = append(srcs, s)
	}
	srcs[0].(*Source).ownsF = true
	z, err := mlfeed.Zip(srcs...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w; name one matrix as %s:/group (the file holds %s)", f.name, err, f.name, strings.Join(groups, ", "))
	}
	return z, nil
}

// Writer options (--write-opt): format, level, chunk, shuffle, minimize, expand, group.
func writeOptions(o *format.WriteOptions) (WriteOptions, string, error) {
	var wo WriteOptions
	if o == nil {
		return wo, "", nil
	}
	params, err := format.NormalizeParams("binsparse", o.Params, WriteParams)
	if err != nil {
		return wo, "", err
	}
	wo.Context = o.Context
	if o.Compat != "" {
		return wo, "", fmt.Errorf("%w: binsparse has no compatibility modes (compat %q)", format.ErrUsage, o.Compat)
	}
	switch o.Compress {
	case "", "gzip", "deflate":
	case "none":
		wo.Level = NoCompression
	default:
		return wo, "", fmt.Errorf("%w: binsparse compression %q: want gzip, deflate or none", format.ErrUsage, o.Compress)
	}
	if v, ok := params["format"]; ok {
		f, ok := parseFormat(strings.ToUpper(v))
		if !ok || f == Custom {
			return wo, "", fmt.Errorf("%w: binsparse --write-opt format=%q: want one of DVEC, DMATR, DMATC, CVEC, CSR, CSC, DCSR, DCSC, COOR, COOC", format.ErrUsage, v)
		}
		wo.Format = f
	}
	if v, ok := params["level"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 9 {
			return wo, "", fmt.Errorf("%w: binsparse --write-opt level=%q: want 0 (none) to 9", format.ErrUsage, v)
		}
		wo.Level = n
		if n == 0 {
			wo.Level = NoCompression
		}
	}
	if v, ok := params["chunk"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return wo, "", fmt.Errorf("%w: binsparse --write-opt chunk=%q: want a positive number of bytes", format.ErrUsage, v)
		}
		wo.Chunk = n
	}
	for _, k := range []string{"shuffle", "minimize", "expand"} {
		v, ok := params[k]
		if !ok {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return wo, "", fmt.Errorf("%w: binsparse --write-opt %s=%q: want true or false", format.ErrUsage, k, v)
		}
		switch k {
		case "shuffle":
			wo.Shuffle = b
		case "minimize":
			wo.Minimize = b
		case "expand":
			wo.Expand = b
		}
	}
	return wo, params["group"], nil
}

func createFormat(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	f, err := format.SeekableFile("binsparse", w)
	if err != nil {
		return nil, err
	}
	wo, group, err := writeOptions(o)
	if err != nil {
		return nil, err
	}
	// The caller's temporary file may hide the extension: the final name tells.
	name := f.Name()
	if o != nil && o.Name != "" {
		name = o.Name
	}
	return newSink(f.Name(), isNPZName(name), schema, group, &wo)
}

// isNPZName reports whether a (temporary) file name stands for an NPZ output.
func isNPZName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".npz") || strings.Contains(l, ".npz.tmp")
}

func validateFormat(name string, opts *format.Options, report func(error) bool) error {
	_, group, err := sourceOptions(opts)
	if err != nil {
		return err
	}
	f, err := OpenFile(name)
	if err != nil {
		return err
	}
	defer f.Close()
	groups := []string{group}
	if _, inner := format.SplitPath(name); inner != "" {
		groups = []string{inner}
	} else if group == "" {
		if groups, err = f.Matrices(); err != nil {
			return err
		}
		if len(groups) == 0 {
			report(fmt.Errorf("%s: %w: no Binsparse descriptor in the file", f.name, ErrFormat))
			return nil
		}
	}
	for _, g := range groups {
		m, err := f.ReadMatrix(g)
		if err != nil {
			if !report(err) {
				return nil
			}
			continue
		}
		cont := true
		m.ValidateAll(func(e error) bool {
			if ae, ok := e.(*ArrayError); ok {
				ae.File = f.where(g)
			} else {
				e = fmt.Errorf("%s: %w", f.where(g), e)
			}
			cont = report(e)
			return cont
		})
		if !cont {
			return nil
		}
	}
	return nil
}
