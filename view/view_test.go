package view

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
)

const (
	testToken = "0123456789abcdef0123456789abcdef"
	testPort  = 34567
	testHost  = "127.0.0.1:34567"
)

func mnistPaths() []string {
	d := filepath.Join("..", "testdata", "mnist")
	return []string{filepath.Join(d, "t10k-images-idx3-ubyte.gz"), filepath.Join(d, "t10k-labels-idx1-ubyte.gz")}
}

func open(t *testing.T, names ...string) DataSet {
	t.Helper()
	src, err := dataset.OpenFiles(names, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return DataSet{Name: strings.Join(names, " "), Format: dataset.FormatOf(names), Files: names, Source: src}
}

// server returns a started Server over sets whose statistics pass has ended.
func server(t *testing.T, sets ...DataSet) *Server {
	t.Helper()
	s, err := New(sets, Options{Token: testToken, Port: testPort})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := s.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a GET of target with the token cookie (unless the target has a token or
// noCookie) and the page's Host header.
func do(s *Server, target string, cookie bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = testHost
	if cookie {
		r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: testToken})
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func getJSON(t *testing.T, s *Server, target string, v any) {
	t.Helper()
	w := do(s, target, true)
	if w.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", target, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q", target, ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
}

func TestTokenRefused(t *testing.T) {
	s := server(t, open(t, mnistPaths()...))
	for _, target := range []string{"/", "/app.js", "/api/info", "/api/stats", "/api/image?seq=0", "/?token=wrong", "/api/info?token=" + testToken[:31]} {
		if w := do(s, target, false); w.Code != http.StatusForbidden {
			t.Errorf("%s without the token: %d, want 403", target, w.Code)
		}
		if strings.Contains(target, "token") {
			continue
		}
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Host = testHost
		r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: strings.ToUpper(testToken)})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s with a wrong cookie: %d, want 403", target, w.Code)
		}
	}
	// The tokened address sets the cookie and drops the token from the address.
	w := do(s, "/?token="+testToken, false)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("tokened page: %d to %q, want 303 to /", w.Code, w.Header().Get("Location"))
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 || cs[0].Value != testToken || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %v", cs)
	}
	if w := do(s, "/", true); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<script src=\"/app.js\"") || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("page with the cookie: %d %.200s", w.Code, w.Body)
	}
	if w := do(s, "/api/info?token="+testToken, false); w.Code != http.StatusOK {
		t.Fatalf("endpoint with the token: %d", w.Code)
	}
}

func TestHostRefused(t *testing.T) {
	s := server(t, open(t, mnistPaths()...))
	for host, want := range map[string]int{
		"127.0.0.1:34567":        200,
		"localhost:34567":        200,
		"LocalHost:34567":        200,
		"evil.example:34567":     403,
		"127.0.0.1":              403,
		"localhost":              403,
		"127.0.0.1:80":           403,
		"[::1]:34567":            403,
		"127.0.0.1.nip.io:34567": 403,
		"":                       403,
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/info", nil)
		r.Host = host
		r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: testToken})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
}

func TestReadOnlyAndNothingElse(t *testing.T) {
	s := server(t, open(t, mnistPaths()...))
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		r := httptest.NewRequest(m, "/api/info", strings.NewReader("x"))
		r.Host = testHost
		r.AddCookie(&http.Cookie{Name: s.cookieName(), Value: testToken})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, w.Code)
		}
	}
	for _, target := range []string{"/../view.go", "/assets/app.js", "/view.go", "/api/files", "/etc/passwd", "/api/image?seq=0&stream=1",
		"/api/records?from=2000", "/api/records?n=0", "/api/records?n=201", "/api/records?set=1", "/api/grid?from=-1", "/api/image?seq=x"} {
		w := do(s, target, true)
		if w.Code != http.StatusNotFound && w.Code != http.StatusBadRequest && w.Code != http.StatusMovedPermanently {
			t.Errorf("%s: %d, want 404 or 400", target, w.Code)
		}
	}
	if w := do(s, "/app.js", true); w.Code != 200 || !strings.Contains(w.Body.String(), "SetView") {
		t.Errorf("/app.js: %d", w.Code)
	}
	if csp := do(s, "/", true).Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

// idx reads an IDX file (gzip or not) and returns its data after the header.
func idx(t *testing.T, name string, header int) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(z); err != nil {
			t.Fatal(err)
		}
	}
	return b[header:]
}

func TestInfoStatsGridImage(t *testing.T) {
	paths := mnistPaths()
	s := server(t, open(t, paths...))
	var info Info
	getJSON(t, s, "/api/info", &info)
	if len(info.Sets) != 1 || info.Diff != nil {
		t.Fatalf("info %+v", info)
	}
	si := info.Sets[0]
	if si.Format != "idx" || si.Sequences != 2000 || si.Samples != 2000 || si.Chunks < 1 || len(si.Files) != 2 || si.Label != "labels" {
		t.Fatalf("set %+v", si)
	}
	if len(si.Streams) != 2 || si.Streams[0].Name != "features" || si.Streams[0].Image != "pixels" || si.Streams[1].Name != "labels" || si.Streams[1].Image != "" {
		t.Fatalf("streams %+v", si.Streams)
	}
	// The page itself lists every stream with its counts (before its script runs).
	page := do(s, "/", true).Body.String()
	for _, want := range []string{
		`<td class="format">idx</td>`, `<td class="num sequences">2000</td>`, `<td class="num samples">2000</td>`,
		`<tr class="stream" data-stream="features"><td class="stream-name">features</td><td>dense</td><td>uint8</td><td>28×28</td><td class="num stream-samples">2000</td><td class="num stream-values">1568000</td></tr>`,
		`<tr class="stream" data-stream="labels"><td class="stream-name">labels</td><td>dense</td><td>uint8</td><td>1</td><td class="num stream-samples">2000</td><td class="num stream-values">2000</td></tr>`,
		`read 2000 sequences`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	var st StatsInfo
	getJSON(t, s, "/api/stats", &st)
	if !st.Finished || st.Done != 2000 || st.Total != 2000 || st.Error != "" || len(st.Charts) == 0 {
		t.Fatalf("stats %+v", st)
	}
	if w := do(s, "/api/charts.png", true); w.Code != 200 || w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("charts.png: %d", w.Code)
	} else if _, err := png.Decode(w.Body); err != nil {
		t.Fatalf("charts.png: %v", err)
	}
	labels := idx(t, paths[1], 8)
	images := idx(t, paths[0], 16)
	want := map[int64]int64{}
	for _, l := range labels {
		want[int64(l)]++
	}
	lab := st.Result.Streams[1]
	if lab.Samples != 2000 || lab.Classes == nil || len(lab.Classes.Counts) != len(want) {
		t.Fatalf("label stream %+v", lab)
	}
	for _, c := range lab.Classes.Counts {
		if want[c.Class] != c.Count {
			t.Errorf("class %d: %d, the IDX file has %d", c.Class, c.Count, want[c.Class])
		}
	}
	var g Grid
	getJSON(t, s, "/api/grid?from=1990&n=50", &g)
	if g.Stream != "features" || g.Label != "labels" || g.Total != 2000 || len(g.Items) != 10 {
		t.Fatalf("grid %+v", g)
	}
	for _, it := range g.Items {
		if it.Label != string(rune('0'+labels[it.Seq])) {
			t.Errorf("grid record %d: label %q, the IDX file has %d", it.Seq, it.Label, labels[it.Seq])
		}
	}
	for _, seq := range []int64{0, 1234, 1999} {
		w := do(s, "/api/image?seq="+strconv.FormatInt(seq, 10), true)
		if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" {
			t.Fatalf("image %d: %d %s", seq, w.Code, w.Header().Get("Content-Type"))
		}
		img, err := png.Decode(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		gray, ok := img.(*image.Gray)
		if !ok || gray.Rect.Dx() != 28 || gray.Rect.Dy() != 28 {
			t.Fatalf("image %d: %T %v", seq, img, img.Bounds())
		}
		if !bytes.Equal(gray.Pix, images[seq*784:(seq+1)*784]) {
			t.Errorf("image %d differs from the IDX file's", seq)
		}
	}
	var recs Records
	getJSON(t, s, "/api/records?from=1995&n=10", &recs)
	if recs.From != 1995 || recs.Total != 2000 || len(recs.Records) != 5 {
		t.Fatalf("records %+v", recs)
	}
	for _, r := range recs.Records {
		if !r.Streams[0].Image || r.Streams[1].Text != "["+string(rune('0'+labels[r.Seq]))+"]" {
			t.Errorf("record %d: %+v", r.Seq, r.Streams)
		}
	}
}

func TestSparseAndText(t *testing.T) {
	cbf := open(t, filepath.Join("..", "testdata", "cntk", "cbf", "10x10_sparse.bin"))
	s := server(t, cbf)
	var recs Records
	getJSON(t, s, "/api/records?n=3", &recs)
	if len(recs.Records) != 3 || !strings.Contains(recs.Records[0].Streams[0].Text, `"indices":[`) {
		t.Fatalf("records %+v", recs)
	}
	if w := do(s, "/api/grid", true); w.Code != http.StatusNotFound {
		t.Errorf("grid of a data set without images: %d", w.Code)
	}
	var st StatsInfo
	getJSON(t, s, "/api/stats", &st)
	if st.Result.Streams[0].Sparse == nil || st.Result.Samples != 100 {
		t.Errorf("stats %+v", st.Result)
	}

	idv := open(t, filepath.Join("..", "testdata", "idv", "datatypes.idv"))
	s = server(t, idv)
	var info Info
	getJSON(t, s, "/api/info", &info)
	if n := len(info.Sets[0].Streams); n != 9 {
		t.Fatalf("%d streams", n)
	}
	getJSON(t, s, "/api/records?n=5", &recs)
	if len(recs.Records) != 5 || recs.Records[0].Streams[8].Name != "tx" {
		t.Fatalf("records %+v", recs)
	}
	// ML.NET's TimeSpan of 2 days and DateTime of 2013-08-05 (Python's datetime agrees), as
	// times, not ticks
	if ts, dt := recs.Records[0].Streams[5], recs.Records[0].Streams[7]; ts.Text != "[2.00:00:00]" || dt.Text != "[2013-08-05T00:00:00]" {
		t.Errorf("times: %s %q, %s %q", ts.Name, ts.Text, dt.Name, dt.Text)
	}
}

func TestTwoDataSets(t *testing.T) {
	a, b := open(t, mnistPaths()...), open(t, mnistPaths()...)
	s := server(t, a, b)
	var info Info
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		getJSON(t, s, "/api/info", &info)
		if info.Diff != nil && !info.Diff.Running || time.Now().After(deadline) {
			break
		}
	}
	if len(info.Sets) != 2 || info.Diff == nil || !info.Diff.Same {
		t.Fatalf("same data sets: %+v", info.Diff)
	}
	var st StatsInfo
	getJSON(t, s, "/api/stats?set=1", &st)
	if st.Done != 2000 {
		t.Fatalf("second set's stats %+v", st)
	}
	c := open(t, mnistPaths()[0])
	s = server(t, a, c)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		getJSON(t, s, "/api/info", &info)
		if !info.Diff.Running || time.Now().After(deadline) {
			break
		}
	}
	if info.Diff.Same || !strings.Contains(info.Diff.First, "2 streams vs 1") {
		t.Fatalf("different data sets: %+v", info.Diff)
	}
}

func TestNew(t *testing.T) {
	a := open(t, mnistPaths()...)
	if _, err := New(nil, Options{Token: testToken}); err == nil {
		t.Error("no data set: no error")
	}
	if _, err := New([]DataSet{a, a, a}, Options{Token: testToken}); err == nil {
		t.Error("three data sets: no error")
	}
	if _, err := New([]DataSet{a}, Options{Token: "short"}); err == nil {
		t.Error("short token: no error")
	}
	if a, b := NewToken(), NewToken(); len(a) != 32 || a == b {
		t.Errorf("tokens %q %q", a, b)
	}
}
