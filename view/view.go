// Package view serves a local web page over one or two opened data sets: what they hold
// (format, files, streams, counts, chunks), each stream's statistics (package stats) as
// charts that fill in while one pass reads the data, image streams as a grid of thumbnails
// with their labels, a record browser, the label distribution, and for two data sets the
// first difference between them (mlfeed.Diff). It is what `mlfeed view` serves.
//
// A Server is an http.Handler. It is read-only and serves nothing but its embedded assets
// and the data sets it was given. It answers only requests that carry its token (in the
// query, ?token=..., which sets a cookie, or in that cookie) and whose Host header names the
// loopback address and port it was told (127.0.0.1:PORT or localhost:PORT), so that another
// site a browser visits cannot read the data through DNS rebinding. Binding the listener to
// the loopback address is the caller's part.
package view

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/render"
	"github.com/mlfeed/mlfeed/stats"
)

//go:embed assets
var assets embed.FS

// DataSet is one opened data set and how the page names it.
type DataSet struct {
	// Name is the data set's title on the page (the inputs' names).
	Name string
	// Format is the format's name ("idx"); Files the files or shards read.
	Format string
	Files  []string
	// Source is the opened data set; the Server reads it and does not close it.
	Source mlfeed.Source
}

// Options configure a Server.
type Options struct {
	// Token is the secret every request must carry; NewToken makes one.
	Token string
	// Port is the port the page is served on: requests must name 127.0.0.1:Port or
	// localhost:Port in their Host header.
	Port int
	// Stats chooses what the statistics pass reads (Limit, Sample, Seed, Bins, Top); its
	// Progress is the Server's.
	Stats stats.Options
}

// Limits of what one request asks for.
const (
	// MaxRecords is the most records one /api/records or /api/grid request returns.
	MaxRecords = 200
	// maxText is the most bytes of one stream's values a record shows.
	maxText = 4096
	// maxImagePixels bounds the thumbnails drawn from dense streams.
	maxImagePixels = 1 << 24
	// maxResponse bounds the text of one /api/records answer: it holds fewer records than
	// asked when their values are long (many streams of long values).
	maxResponse = 4 << 20
	// cachedChunks is the number of decoded chunks kept per data set for the browser.
	cachedChunks = 4
)

// NewToken returns a random token of 128 bits, in hex.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Server is the page's http.Handler.
type Server struct {
	opts  Options
	sets  []*set
	files http.Handler

	diffMu   sync.Mutex
	diffDone bool
	diffErr  error
}

// set is one data set with its statistics pass and chunk cache.
type set struct {
	DataSet
	schema mlfeed.Schema
	table  []mlfeed.ChunkInfo
	starts []int64 // starts[i]: the first sequence of chunk i; len(table)+1
	images []imageStream
	label  int // the stream shown under thumbnails, -1: none

	mu       sync.Mutex
	col      *stats.Collector
	done     int64
	finished bool
	err      error

	cacheMu sync.Mutex
	cache   []cached
}

type cached struct {
	i int
	c *mlfeed.Chunk
}

// imageStream is a stream drawn as images: dense numbers of h x w (x channels), or bytes
// holding PNG or JPEG (encoded).
type imageStream struct {
	stream   int
	h, w, ch int
	encoded  bool
}

// New returns a Server over sets (one or two). Start runs the statistics pass.
func New(sets []DataSet, opts Options) (*Server, error) {
	if len(sets) == 0 || len(sets) > 2 {
		return nil, fmt.Errorf("view: %d data sets, want 1 or 2", len(sets))
	}
	if len(opts.Token) < 16 {
		return nil, fmt.Errorf("view: a token of at least 16 characters is needed")
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, files: http.FileServerFS(sub)}
	for _, d := range sets {
		st := &set{DataSet: d, schema: d.Source.Schema(), table: d.Source.Chunks(), label: -1}
		st.starts = make([]int64, len(st.table)+1)
		for i, c := range st.table {
			st.starts[i+1] = st.starts[i] + int64(c.Sequences)
		}
		st.images = imageStreams(&st.schema)
		st.label = labelStream(&st.schema, st.images)
		o := opts.Stats
		o.Progress = nil
		st.col = stats.NewCollector(st.schema, &o)
		s.sets = append(s.sets, st)
	}
	return s, nil
}

// imageStreams finds the streams drawn as images.
func imageStreams(sc *mlfeed.Schema) []imageStream {
	var out []imageStream
	for i := range sc.Streams {
		st := &sc.Streams[i]
		if h, w, ok := render.ImageShape(st); ok {
			out = append(out, imageStream{stream: i, h: h, w: w, ch: 1})
			continue
		}
		if sh := st.Shape; st.Storage == mlfeed.Dense && st.Type.IsNumeric() && len(sh) == 3 && (sh[2] == 3 || sh[2] == 4) && sh[0] > 0 && sh[1] > 0 {
			out = append(out, imageStream{stream: i, h: sh[0], w: sh[1], ch: sh[2]})
			continue
		}
		if st.Type == mlfeed.Bytes {
			out = append(out, imageStream{stream: i, encoded: true})
		}
	}
	return out
}

// labelStream picks the stream whose values label the thumbnails: the first small dense
// numeric stream (a class number or a one-hot vector) or text stream that is not an image.
func labelStream(sc *mlfeed.Schema, imgs []imageStream) int {
	for i := range sc.Streams {
		st := &sc.Streams[i]
		isImage := false
		for _, im := range imgs {
			isImage = isImage || im.stream == i
		}
		if isImage || st.Storage != mlfeed.Dense {
			continue
		}
		if (st.Type.IsNumeric() && st.Dim >= 1 && st.Dim <= 1000) || st.Type == mlfeed.String {
			return i
		}
	}
	return -1
}

// Start runs the statistics pass over each data set, and for two the comparison, in the
// background until they end or ctx is cancelled.
func (s *Server) Start(ctx context.Context) {
	for _, st := range s.sets {
		go st.collect(ctx)
	}
	if len(s.sets) == 2 {
		go func() {
			err := mlfeed.Diff(ctx, s.sets[0].Source, s.sets[1].Source)
			if ctx.Err() != nil {
				return
			}
			s.diffMu.Lock()
			s.diffDone, s.diffErr = true, err
			s.diffMu.Unlock()
		}()
	}
}

// Wait blocks until every statistics pass has ended or ctx is done; for tests and callers
// that want the whole figures.
func (s *Server) Wait(ctx context.Context) error {
	for _, st := range s.sets {
		for {
			st.mu.Lock()
			fin, err := st.finished, st.err
			st.mu.Unlock()
			if fin {
				if err != nil {
					return err
				}
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// collect reads the data set in order into the collector (the first Stats.Limit sequences
// when set; Stats.Sample is not drawn here: the page reads in order so that its figures
// grow), decoding ahead on the scheduler ctx carries (package internal/sched: the CLI's
// --threads and --memory), one thread without.
func (st *set) collect(ctx context.Context) {
	limit := st.col.Result().Limit
	var order []int
	var want int64
	for i, c := range st.table {
		if limit > 0 && want >= limit {
			break
		}
		order = append(order, i)
		want += int64(c.Sequences)
	}
	s := sched.FromContext(ctx)
	if s == nil {
		s = sched.New(1, 0)
	}
	ra := s.ReadAhead(ctx, st.Source, order, &sched.ReadAheadOptions{Recycle: true})
	var done int64
	var err error
	for ra.Next() {
		i, c := ra.Index(), ra.Chunk()
		if c.Sequences != st.table[i].Sequences {
			err = fmt.Errorf("chunk %d: %w: holds %d sequences, the chunk table says %d", i, mlfeed.ErrFormat, c.Sequences, st.table[i].Sequences)
			break
		}
		if err = c.Validate(&st.schema); err != nil {
			err = fmt.Errorf("chunk %d: %w", i, err)
			break
		}
		n := c.Sequences
		if limit > 0 && done+int64(n) > limit {
			n = int(limit - done)
		}
		st.mu.Lock()
		st.col.Add(c, 0, n) // Add keeps nothing of c, which the read-ahead recycles
		done += int64(n)
		st.done = done
		st.mu.Unlock()
	}
	if err == nil {
		err = ra.Err()
	}
	ra.Close()
	st.mu.Lock()
	st.finished, st.err = true, err
	st.mu.Unlock()
}

// ServeHTTP checks the Host header and the token, then serves the page, its assets and its
// JSON endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	if !s.hostAllowed(r.Host) {
		http.Error(w, "forbidden: the Host header must be 127.0.0.1 or localhost with the page's port", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the page is read-only", http.StatusMethodNotAllowed)
		return
	}
	cookie := s.cookieName()
	if q := r.URL.Query().Get("token"); q != "" {
		if !s.tokenOK(q) {
			http.Error(w, "forbidden: wrong token", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.URL.Path == "/" {
			// Drop the token from the address bar and history.
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
	} else if c, err := r.Cookie(cookie); err != nil || !s.tokenOK(c.Value) {
		http.Error(w, "forbidden: open the address with the token that mlfeed view printed", http.StatusForbidden)
		return
	}
	h.Set("Cache-Control", "no-store")
	switch p := r.URL.Path; {
	case p == "/":
		s.page(w)
	case p == "/app.js" || p == "/style.css":
		s.files.ServeHTTP(w, r)
	case p == "/api/info":
		s.info(w)
	case p == "/api/stats":
		s.withSet(w, r, s.stats)
	case p == "/api/charts.png":
		s.withSet(w, r, s.chartsPNG)
	case p == "/api/records":
		s.withSet(w, r, s.records)
	case p == "/api/grid":
		s.withSet(w, r, s.grid)
	case p == "/api/image":
		s.withSet(w, r, s.image)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) cookieName() string { return "mlfeed_view_" + strconv.Itoa(s.opts.Port) }

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// hostAllowed reports whether host is 127.0.0.1:Port or localhost:Port.
func (s *Server) hostAllowed(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil || port != strconv.Itoa(s.opts.Port) {
		return false
	}
	return name == "127.0.0.1" || strings.EqualFold(name, "localhost")
}

// httpError is an error with a status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// withSet parses ?set=N and calls fn; its error becomes the response.
func (s *Server) withSet(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter, *http.Request, *set) error) {
	n, err := intParam(r, "set", 0, 0, int64(len(s.sets)-1))
	if err == nil {
		err = fn(w, r, s.sets[n])
	}
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			http.Error(w, he.msg, he.code)
			return
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// intParam reads an integer query parameter within [lo, hi], def when absent.
func intParam(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("%s=%q: want an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b.Bytes())
}

// Info is the JSON of /api/info.
type Info struct {
	Sets []SetInfo `json:"sets"`
	// Diff compares two data sets: nil with one, or while the comparison runs.
	Diff *DiffInfo `json:"diff,omitempty"`
}

// SetInfo describes one data set.
type SetInfo struct {
	Name      string         `json:"name"`
	Format    string         `json:"format"`
	Files     []string       `json:"files"`
	Sequences int64          `json:"sequences"`
	Samples   int64          `json:"samples"`
	Chunks    int            `json:"chunks"`
	Streams   []StreamInfo   `json:"streams"`
	Label     string         `json:"label,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
}

// StreamInfo describes one stream.
type StreamInfo struct {
	Name    string `json:"name"`
	Storage string `json:"storage"`
	Type    string `json:"type"`
	Dim     int    `json:"dim"`
	Shape   []int  `json:"shape,omitempty"`
	// Image says the stream is drawn as images ("pixels", or "encoded" for bytes that may
	// hold PNG or JPEG).
	Image string `json:"image,omitempty"`
}

// DiffInfo is the comparison of two data sets.
type DiffInfo struct {
	Running bool   `json:"running"`
	Same    bool   `json:"same"`
	First   string `json:"first,omitempty"`
}

func (s *Server) info(w http.ResponseWriter) {
	var out Info
	for _, st := range s.sets {
		seqs, samples := mlfeed.Totals(st.table)
		si := SetInfo{Name: st.Name, Format: st.Format, Files: st.Files, Sequences: seqs, Samples: samples, Chunks: len(st.table)}
		if si.Files == nil {
			si.Files = []string{}
		}
		if d, ok := st.Source.(mlfeed.Detailer); ok {
			si.Details = d.Details()
		}
		if st.label >= 0 {
			si.Label = st.schema.Streams[st.label].Name
		}
		for i := range st.schema.Streams {
			x := &st.schema.Streams[i]
			sti := StreamInfo{Name: x.Name, Storage: x.Storage.String(), Type: x.Type.String(), Dim: x.Dim, Shape: x.Shape}
			if im := st.imageOf(i); im != nil {
				sti.Image = "pixels"
				if im.encoded {
					sti.Image = "encoded"
				}
			}
			si.Streams = append(si.Streams, sti)
		}
		out.Sets = append(out.Sets, si)
	}
	if len(s.sets) == 2 {
		s.diffMu.Lock()
		d := &DiffInfo{Running: !s.diffDone}
		if s.diffDone {
			d.Same = s.diffErr == nil
			if s.diffErr != nil {
				d.First = s.diffErr.Error()
			}
		}
		s.diffMu.Unlock()
		out.Diff = d
	}
	writeJSON(w, &out)
}

func (st *set) imageOf(stream int) *imageStream {
	for k := range st.images {
		if st.images[k].stream == stream {
			return &st.images[k]
		}
	}
	return nil
}

// StatsInfo is the JSON of /api/stats: the figures so far and their charts.
type StatsInfo struct {
	// Done is the number of sequences read so far, of Total; Finished says the pass ended
	// (Error: how it failed).
	Done     int64          `json:"done"`
	Total    int64          `json:"total"`
	Finished bool           `json:"finished"`
	Error    string         `json:"error,omitempty"`
	Result   *stats.Result  `json:"result"`
	Charts   []render.Chart `json:"charts"`
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, st *set) error {
	st.mu.Lock()
	res := st.col.Result()
	out := StatsInfo{Done: st.done, Finished: st.finished, Result: res}
	if st.err != nil {
		out.Error = st.err.Error()
	}
	st.mu.Unlock()
	out.Total, _ = mlfeed.Totals(st.table)
	if l := res.Limit; l > 0 && l < out.Total {
		out.Total = l
	}
	res.TotalSequences, _ = mlfeed.Totals(st.table)
	out.Charts = render.StatsCharts(res)
	writeJSON(w, &out)
	return nil
}

// pageHTML is the page before its script runs (assets/page.html): the data sets and their
// streams with the counts found so far, written by writeSets in place of its <!--sets-->,
// and their names in place of <!--title-->. The script then builds the whole page from the
// JSON endpoints. (No html/template: its reflective method calls stop the linker from
// dropping unused methods, which made every binary linking this package 10 MB larger.)
var pageHTML = func() string {
	b, err := assets.ReadFile("assets/page.html")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// writeSets writes the sections of the data sets (escaped, as html/template would).
func writeSets(b *bytes.Buffer, sets []pageSet) {
	e := html.EscapeString
	for _, s := range sets {
		b.WriteString("<section class=\"set static\">\n<h2>" + e(s.Name) + "</h2>\n<table class=\"overview\">\n")
		b.WriteString("<tr><th>format</th><td class=\"format\">" + e(s.Format) + "</td></tr>\n<tr><th>files</th><td><div class=\"files\">")
		for _, f := range s.Files {
			b.WriteString("<div>" + e(f) + "</div>")
		}
		fmt.Fprintf(b, "</div></td></tr>\n<tr><th>sequences</th><td class=\"num sequences\">%d</td></tr>\n", s.Sequences)
		fmt.Fprintf(b, "<tr><th>samples</th><td class=\"num samples\">%d</td></tr>\n<tr><th>chunks</th><td class=\"num chunks\">%d</td></tr>\n</table>\n", s.Samples, s.Chunks)
		b.WriteString("<h3>streams</h3>\n<table class=\"streams\">\n<tr><th>stream</th><th>storage</th><th>type</th><th>shape</th><th>samples</th><th>values</th></tr>\n")
		for _, x := range s.Streams {
			b.WriteString("<tr class=\"stream\" data-stream=\"" + e(x.Name) + "\"><td class=\"stream-name\">" + e(x.Name) + "</td><td>" + e(x.Storage) + "</td><td>" + e(x.Type) +
				"</td><td>" + e(x.ShapeText) + "</td><td class=\"num stream-samples\">" + e(x.Samples) + "</td><td class=\"num stream-values\">" + e(x.Values) + "</td></tr>\n")
		}
		b.WriteString("</table>\n<p class=\"progress\">" + e(s.Progress) + "</p>\n</section>\n")
	}
}

// pageSet and pageStream are what the page shows.
type pageSet struct {
	SetInfo
	Streams  []pageStream
	Progress string
}

type pageStream struct {
	StreamInfo
	ShapeText       string
	Samples, Values string
}

func (s *Server) page(w http.ResponseWriter) {
	var sets []pageSet
	for _, st := range s.sets {
		seqs, samples := mlfeed.Totals(st.table)
		ps := pageSet{SetInfo: SetInfo{Name: st.Name, Format: st.Format, Files: st.Files, Sequences: seqs, Samples: samples, Chunks: len(st.table)}}
		st.mu.Lock()
		res, fin, done := st.col.Result(), st.finished, st.done
		st.mu.Unlock()
		ps.Progress = fmt.Sprintf("reading: %d of %d sequences", done, seqs)
		if fin {
			ps.Progress = fmt.Sprintf("read %d sequences", done)
		}
		for i := range st.schema.Streams {
			x := &st.schema.Streams[i]
			p := pageStream{StreamInfo: StreamInfo{Name: x.Name, Storage: x.Storage.String(), Type: x.Type.String()}, ShapeText: shapeText(x)}
			p.Samples = strconv.FormatInt(res.Streams[i].Samples, 10)
			p.Values = strconv.FormatInt(res.Streams[i].Values, 10)
			ps.Streams = append(ps.Streams, p)
		}
		sets = append(sets, ps)
	}
	var names []string
	for _, ps := range sets {
		names = append(names, html.EscapeString(ps.Name))
	}
	head, tail, _ := strings.Cut(strings.Replace(pageHTML, "<!--title-->", strings.Join(names, " | "), 1), "<!--sets-->")
	var b bytes.Buffer
	b.WriteString(head)
	writeSets(&b, sets)
	b.WriteString(tail)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// shapeText writes a stream's sample shape as the page does: "28×28", "784", "variable".
func shapeText(x *mlfeed.Stream) string {
	if x.Dim == 0 && x.Shape == nil {
		return "variable"
	}
	var d []string
	for _, v := range x.SampleShape() {
		d = append(d, strconv.Itoa(v))
	}
	return strings.Join(d, "×")
}

// chartsPNG draws the charts of the figures so far as one PNG image, as `mlfeed stats --png`
// does.
func (s *Server) chartsPNG(w http.ResponseWriter, r *http.Request, st *set) error {
	st.mu.Lock()
	res := st.col.Result()
	st.mu.Unlock()
	var b bytes.Buffer
	heading := fmt.Sprintf("mlfeed view %s: %d sequences, %d samples", st.Name, res.Sequences, res.Samples)
	if err := render.ChartsPNG(&b, heading, render.StatsCharts(res)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b.Bytes())
	return nil
}

// chunkOf returns the decoded chunk that holds sequence seq and seq's index in it.
func (st *set) chunkOf(ctx context.Context, seq int64) (*mlfeed.Chunk, int, error) {
	i := sort.Search(len(st.table), func(i int) bool { return st.starts[i+1] > seq })
	if i >= len(st.table) {
		return nil, 0, badRequest("sequence %d: the data set has %d", seq, st.starts[len(st.table)])
	}
	q := int(seq - st.starts[i])
	st.cacheMu.Lock()
	for k, c := range st.cache {
		if c.i == i {
			st.cache = append(append([]cached{c}, st.cache[:k]...), st.cache[k+1:]...)
			st.cacheMu.Unlock()
			return c.c, q, nil
		}
	}
	st.cacheMu.Unlock()
	c, err := st.Source.ReadChunk(ctx, i)
	if err != nil {
		return nil, 0, err
	}
	if c.Sequences != st.table[i].Sequences {
		return nil, 0, fmt.Errorf("chunk %d: %w: holds %d sequences, the chunk table says %d", i, mlfeed.ErrFormat, c.Sequences, st.table[i].Sequences)
	}
	if err := c.Validate(&st.schema); err != nil {
		return nil, 0, fmt.Errorf("chunk %d: %w", i, err)
	}
	st.cacheMu.Lock()
	st.cache = append([]cached{{i, c}}, st.cache...)
	if len(st.cache) > cachedChunks {
		st.cache = st.cache[:cachedChunks]
	}
	st.cacheMu.Unlock()
	return c, q, nil
}

// page parses ?from=&n= against the data set's sequences.
func (st *set) page(r *http.Request, defN int64) (from, n int64, err error) {
	total := st.starts[len(st.table)]
	if from, err = intParam(r, "from", 0, 0, max(total-1, 0)); err != nil {
		return 0, 0, err
	}
	if n, err = intParam(r, "n", defN, 1, MaxRecords); err != nil {
		return 0, 0, err
	}
	return from, min(n, total-from), nil
}

// Records is the JSON of /api/records.
type Records struct {
	From    int64    `json:"from"`
	Total   int64    `json:"total"`
	Records []Record `json:"records"`
}

// Record is one sequence: per stream its samples' values as JSON text (cut at 4 KiB), and
// for image streams the number of samples to draw with /api/image.
type Record struct {
	Seq     int64        `json:"seq"`
	Streams []RecordData `json:"streams"`
}

// RecordData is one stream of a record.
type RecordData struct {
	Name    string `json:"name"`
	Samples int64  `json:"samples"`
	Text    string `json:"text,omitempty"`
	Cut     bool   `json:"cut,omitempty"`
	Image   bool   `json:"image,omitempty"`
}

func (s *Server) records(w http.ResponseWriter, r *http.Request, st *set) error {
	from, n, err := st.page(r, 10)
	if err != nil {
		return err
	}
	out := Records{From: from, Total: st.starts[len(st.table)], Records: []Record{}}
	size := 0
	for seq := from; seq < from+n && size < maxResponse; seq++ {
		c, q, err := st.chunkOf(r.Context(), seq)
		if err != nil {
			return err
		}
		rec := Record{Seq: seq}
		for i := range st.schema.Streams {
			x, d := &st.schema.Streams[i], &c.Streams[i]
			rd := RecordData{Name: x.Name, Samples: d.SeqStart[q+1] - d.SeqStart[q]}
			if im := st.imageOf(i); im != nil && (!im.encoded || encodedImage(x, d, q) != "") {
				rd.Image = true
			} else {
				rd.Text, rd.Cut = valuesText(x, d, q)
			}
			size += len(rd.Text) + len(rd.Name) + 64
			rec.Streams = append(rec.Streams, rd)
		}
		out.Records = append(out.Records, rec)
	}
	writeJSON(w, &out)
	return nil
}

// valuesText returns the samples of sequence q as JSON, cut at maxText bytes.
func valuesText(x *mlfeed.Stream, d *mlfeed.StreamData, q int) (string, bool) {
	var b []byte
	if x.Type == mlfeed.Bytes {
		// Bytes print as their size and media type, not as base64.
		for s := d.SeqStart[q]; s < d.SeqStart[q+1] && len(b) < maxText; s++ {
			from, to := d.SampleRange(x, s)
			for k := from; k < to; k++ {
				v := d.Values.Strings[k]
				if len(b) > 0 {
					b = append(b, ", "...)
				}
				b = fmt.Appendf(b, "[%d bytes, %s]", len(v), stats.MediaType(v))
			}
		}
	} else if (x.Type == mlfeed.DateTime || x.Type == mlfeed.Duration) && x.Storage == mlfeed.Dense {
		// Times print as dates and times, durations as hh:mm:ss, not as ticks.
		for s := d.SeqStart[q]; s < d.SeqStart[q+1] && len(b) < maxText; s++ {
			if s > d.SeqStart[q] {
				b = append(b, '\n')
			}
			from, to := d.SampleRange(x, s)
			b = append(b, '[')
			for k := from; k < to && len(b) < maxText; k++ {
				if k > from {
					b = append(b, ", "...)
				}
				b = mlfeed.AppendTicks(b, x.Type, d.Values.Int64At(k))
			}
			b = append(b, ']')
		}
	} else {
		for s := d.SeqStart[q]; s < d.SeqStart[q+1] && len(b) < maxText; s++ {
			if s > d.SeqStart[q] {
				b = append(b, '\n')
			}
			b = inspect.AppendSample(b, x, d, s)
		}
	}
	if len(b) > maxText {
		return string(bytes.ToValidUTF8(b[:maxText], nil)), true
	}
	return string(b), false
}

// mediaOf returns the media type of the first value of sequence q of a bytes stream, or
// "empty".
func mediaOf(x *mlfeed.Stream, d *mlfeed.StreamData, q int) string {
	if d.SeqStart[q+1] > d.SeqStart[q] {
		if from, to := d.SampleRange(x, d.SeqStart[q]); to > from {
			return stats.MediaType(d.Values.Strings[from])
		}
	}
	return "empty"
}

// encodedImage returns the media type of the first value of sequence q of a bytes stream
// when it is a PNG or JPEG image, else "".
func encodedImage(x *mlfeed.Stream, d *mlfeed.StreamData, q int) string {
	switch t := mediaOf(x, d, q); t {
	case "image/png", "image/jpeg":
		return t
	}
	return ""
}

// Grid is the JSON of /api/grid: the records of the first image stream and their labels.
type Grid struct {
	Stream string      `json:"stream"`
	Label  string      `json:"label,omitempty"`
	Total  int64       `json:"total"`
	Items  []GridImage `json:"items"`
}

// GridImage is one thumbnail: the sequence, and the label's value in it. NotImage, for a
// bytes stream, is the media type of a value that is no PNG or JPEG image (or "empty").
type GridImage struct {
	Seq      int64  `json:"seq"`
	Label    string `json:"label"`
	NotImage string `json:"not_image,omitempty"`
}

func (s *Server) grid(w http.ResponseWriter, r *http.Request, st *set) error {
	if len(st.images) == 0 {
		return &httpError{http.StatusNotFound, "no image stream"}
	}
	from, n, err := st.page(r, 100)
	if err != nil {
		return err
	}
	im := st.images[0]
	out := Grid{Stream: st.schema.Streams[im.stream].Name, Total: st.starts[len(st.table)], Items: []GridImage{}}
	if st.label >= 0 {
		out.Label = st.schema.Streams[st.label].Name
	}
	for seq := from; seq < from+n; seq++ {
		c, q, err := st.chunkOf(r.Context(), seq)
		if err != nil {
			return err
		}
		g := GridImage{Seq: seq}
		if im.encoded && encodedImage(&st.schema.Streams[im.stream], &c.Streams[im.stream], q) == "" {
			g.NotImage = mediaOf(&st.schema.Streams[im.stream], &c.Streams[im.stream], q)
		}
		if st.label >= 0 {
			g.Label = labelOf(&st.schema.Streams[st.label], &c.Streams[st.label], q)
		}
		out.Items = append(out.Items, g)
	}
	writeJSON(w, &out)
	return nil
}

// labelOf writes the label of sequence q: a scalar's value, a one-hot vector's hot index, or
// the values.
func labelOf(x *mlfeed.Stream, d *mlfeed.StreamData, q int) string {
	if d.SeqStart[q+1] == d.SeqStart[q] {
		return ""
	}
	s := d.SeqStart[q]
	from, to := d.SampleRange(x, s)
	if x.Type == mlfeed.String {
		if to-from == 1 && d.SeqStart[q+1]-s == 1 {
			v := d.Values.Strings[from]
			if r := []rune(v); len(r) > 100 {
				v = string(r[:100]) + "…"
			}
			return v
		}
		v, _ := valuesText(x, d, q)
		return v
	}
	if to-from == 1 {
		return string(inspect.AppendValue(nil, d.Values, from))
	}
	hot, ones := -1, 0
	for k := from; k < to; k++ {
		switch d.Values.Float64At(k) {
		case 0:
		case 1:
			hot = k - from
			ones++
		default:
			ones = 2
		}
	}
	if ones == 1 {
		return strconv.Itoa(hot)
	}
	v, _ := valuesText(x, d, q)
	return v
}

func (s *Server) image(w http.ResponseWriter, r *http.Request, st *set) error {
	total := st.starts[len(st.table)]
	seq, err := intParam(r, "seq", 0, 0, max(total-1, 0))
	if err != nil {
		return err
	}
	k, err := intParam(r, "stream", int64(-1), 0, int64(len(st.schema.Streams)-1))
	if err != nil {
		return err
	}
	if k < 0 && len(st.images) > 0 {
		k = int64(st.images[0].stream)
	}
	im := st.imageOf(int(k))
	if im == nil {
		return &httpError{http.StatusNotFound, "not an image stream"}
	}
	c, q, err := st.chunkOf(r.Context(), seq)
	if err != nil {
		return err
	}
	d, x := &c.Streams[k], &st.schema.Streams[k]
	n := d.SeqStart[q+1] - d.SeqStart[q]
	j, err := intParam(r, "sample", 0, 0, max(n-1, 0))
	if err != nil {
		return err
	}
	if n == 0 {
		return &httpError{http.StatusNotFound, "the sequence has no sample of this stream"}
	}
	sample := d.SeqStart[q] + j
	if im.encoded {
		from, to := d.SampleRange(x, sample)
		if to <= from {
			return &httpError{http.StatusNotFound, "empty sample"}
		}
		v := d.Values.Strings[from]
		t := stats.MediaType(v)
		if t != "image/png" && t != "image/jpeg" {
			return &httpError{http.StatusNotFound, "the value is " + t + ", not a PNG or JPEG image"}
		}
		w.Header().Set("Content-Type", t)
		w.Write([]byte(v))
		return nil
	}
	if im.h*im.w > maxImagePixels {
		return &httpError{http.StatusRequestEntityTooLarge, "image too large to draw"}
	}
	var b bytes.Buffer
	if im.ch == 1 {
		g := render.ImageOf(x, d, sample, im.h, im.w)
		err = png.Encode(&b, &image.Gray{Pix: g.Pix, Stride: g.W, Rect: image.Rect(0, 0, g.W, g.H)})
	} else {
		err = png.Encode(&b, colorImage(x, d, sample, im))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b.Bytes())
	return nil
}

// colorImage draws an [H W 3] or [H W 4] sample, values scaled as render.ImageOf scales them
// (from [0, 1] when they all lie there, else clamped to [0, 255]).
func colorImage(x *mlfeed.Stream, d *mlfeed.StreamData, s int64, im *imageStream) image.Image {
	from, _ := d.SampleRange(x, s)
	n := im.h * im.w * im.ch
	unit := true
	for k := 0; k < n && unit; k++ {
		v := d.Values.Float64At(from + k)
		unit = v >= 0 && v <= 1
	}
	px := func(k int) uint8 {
		v := d.Values.Float64At(from + k)
		if unit {
			v *= 255
		}
		if v != v {
			v = 0
		}
		return uint8(max(0, min(255, v)) + 0.5)
	}
	out := image.NewNRGBA(image.Rect(0, 0, im.w, im.h))
	for y := 0; y < im.h; y++ {
		for xx := 0; xx < im.w; xx++ {
			k := (y*im.w + xx) * im.ch
			a := uint8(255)
			if im.ch == 4 {
				a = px(k + 3)
			}
			out.SetNRGBA(xx, y, color.NRGBA{px(k), px(k + 1), px(k + 2), a})
		}
	}
	return out
}
