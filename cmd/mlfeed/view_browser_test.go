package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// The browser tests start `mlfeed view` on real files and drive Debian's chromium headless
// through chromedp. They skip when chromium is not installed (apt-get install chromium).
// Screenshots go to $MLFEED_SCREENSHOTS when set (CI keeps it as an artifact), else to a
// temporary directory; MLFEED_UPDATE_DOCS=1 also writes docs/view-mnist.png.

// chromiumPath returns Debian's chromium, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium): the browser tests need it")
	return ""
}

// startView runs `mlfeed view args` and returns the address it prints (with the token); the
// process is interrupted when the test ends.
func startView(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"view"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	var restMu sync.Mutex
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32}`)
		sent := false
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" && !sent {
				found <- u
				sent = true
				continue
			}
			restMu.Lock()
			rest.WriteString(sc.Text() + "\n")
			restMu.Unlock()
		}
		if !sent {
			close(found)
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		restMu.Lock()
		defer restMu.Unlock()
		if s := rest.String(); strings.Contains(s, "panic") {
			t.Errorf("mlfeed view panicked:\n%s", s)
		}
	})
	select {
	case u, ok := <-found:
		if !ok {
			cmd.Wait()
			restMu.Lock()
			defer restMu.Unlock()
			t.Fatalf("mlfeed view %v printed no address:\n%s", args, rest.String())
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("mlfeed view %v: no address after 30 s", args)
	}
	return ""
}

// browser starts chromium headless and returns a tab's context, and the console errors,
// warnings and exceptions the pages have reported so far (failed requests too).
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	exe := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("no-proxy-server", true), chromedp.UserDataDir(t.TempDir()))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var errs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := errs
		errs = nil
		return out
	}
}

// do runs steps in the browser within a minute.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into a T.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	return v
}

// text returns the text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return v
}

// screenshot returns a PNG of the whole page.
func screenshot(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const imagesLoaded = `Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; }))).then(() => 0)`

// screenshotDir returns where screenshots go.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("MLFEED_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// loadPage opens the page, waits until every statistics pass and list has loaded, checks
// the console and saves a screenshot as name.
func loadPage(t *testing.T, ctx context.Context, consoleErrs func() []string, url, name string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)))
	eval[int](t, ctx, imagesLoaded)
	shot := screenshot(t, ctx)
	if errText := eval[string](t, ctx, `[...document.querySelectorAll(".error")].map(e => e.textContent).join("; ")`); errText != "" {
		t.Errorf("%s: the page shows errors: %s", name, errText)
	}
	if errs := consoleErrs(); len(errs) > 0 {
		t.Errorf("%s: console errors: %v", name, errs)
	}
	p := filepath.Join(screenshotDir(t), name+".png")
	if err := os.WriteFile(p, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// pageSet is what the page shows of one data set.
type pageSet struct {
	Format    string            `json:"format"`
	Sequences string            `json:"sequences"`
	Streams   map[string]string `json:"streams"` // name: samples
	Progress  string            `json:"progress"`
}

func readPage(t *testing.T, ctx context.Context) []pageSet {
	t.Helper()
	return eval[[]pageSet](t, ctx, `[...document.querySelectorAll("section.set")].map(s => ({
		format: s.querySelector(".format").textContent,
		sequences: s.querySelector(".sequences").textContent,
		progress: s.querySelector(".progress").textContent,
		streams: Object.fromEntries([...s.querySelectorAll("tr.stream")].map(r => [r.querySelector(".stream-name").textContent, r.querySelector(".stream-samples").textContent]))
	}))`)
}

// checkCounts compares the page's streams and counts with `mlfeed stats --json`.
func checkCounts(t *testing.T, got pageSet, args ...string) {
	t.Helper()
	out, stderr, code := run(t, append([]string{"stats", "--json", "-q"}, args...)...)
	if code != 0 {
		t.Fatalf("stats %v: %d %s", args, code, stderr)
	}
	var res struct {
		Sequences int64 `json:"sequences"`
		Streams   []struct {
			Name    string `json:"name"`
			Samples int64  `json:"samples"`
		} `json:"streams"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if want := commas(res.Sequences); got.Sequences != want {
		t.Errorf("%v: the page shows %q sequences, stats %s", args, got.Sequences, want)
	}
	if want := "read " + commas(res.Sequences) + " sequences"; got.Progress != want {
		t.Errorf("%v: progress %q, want %q", args, got.Progress, want)
	}
	if len(got.Streams) != len(res.Streams) {
		t.Errorf("%v: the page lists %d streams %v, stats %d", args, len(got.Streams), got.Streams, len(res.Streams))
	}
	for _, s := range res.Streams {
		if v, ok := got.Streams[s.Name]; !ok || v != commas(s.Samples) {
			t.Errorf("%v: stream %q: the page shows %q samples (listed: %v), stats %d", args, s.Name, v, ok, s.Samples)
		}
	}
}

// commas writes n as the page does (en-US grouping).
func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestViewBrowserMNIST(t *testing.T) {
	images, labels := filepath.Join("..", "..", "testdata", "mnist", "t10k-images-idx3-ubyte.gz"), filepath.Join("..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte.gz")
	ctx, consoleErrs := browser(t)
	url := startView(t, images, labels)
	loadPage(t, ctx, consoleErrs, url, "view-mnist")
	if os.Getenv("MLFEED_UPDATE_DOCS") == "1" {
		// The docs show what a browser window shows first.
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		top, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
		cancel()
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "docs", "view-mnist.png"), top, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	sets := readPage(t, ctx)
	if len(sets) != 1 || sets[0].Format != "idx" {
		t.Fatalf("page %+v", sets)
	}
	checkCounts(t, sets[0], images, labels)

	// The grid's thumbnails are the IDX images, and their captions the IDX labels.
	pix, lab := gunzip(t, images)[16:], gunzip(t, labels)[8:]
	checkGrid := func(from int) {
		t.Helper()
		type thumb struct {
			Seq   int    `json:"seq"`
			Label string `json:"label"`
			Pix   []int  `json:"pix"`
		}
		thumbs := eval[[]thumb](t, ctx, `[...document.querySelectorAll(".thumb")].map(f => {
			const img = f.querySelector("img"), c = document.createElement("canvas");
			c.width = img.naturalWidth; c.height = img.naturalHeight;
			const g = c.getContext("2d"); g.drawImage(img, 0, 0);
			const d = c.width ? g.getImageData(0, 0, c.width, c.height).data : [];
			const pix = []; for (let i = 0; i < d.length; i += 4) pix.push(d[i]);
			return { seq: +f.dataset.seq, label: f.querySelector("figcaption").textContent, pix };
		})`)
		if len(thumbs) != 100 || thumbs[0].Seq != from {
			t.Fatalf("grid from %d: %d thumbnails, the first %+v", from, len(thumbs), thumbs[:min(1, len(thumbs))])
		}
		bad := 0
		for _, th := range thumbs {
			if want := fmt.Sprint(lab[th.Seq]); th.Label != want {
				t.Errorf("thumbnail %d: the page says %q, the IDX label is %s", th.Seq, th.Label, want)
			}
			want := pix[th.Seq*784 : (th.Seq+1)*784]
			if len(th.Pix) != 784 {
				t.Fatalf("thumbnail %d: %d pixels", th.Seq, len(th.Pix))
			}
			for k := range want {
				if int(want[k]) != th.Pix[k] {
					bad++
					break
				}
			}
		}
		if bad > 0 {
			t.Errorf("grid from %d: %d thumbnails differ from the IDX images", from, bad)
		}
	}
	checkGrid(0)

	// Paging: the record browser and the grid move on by a page.
	do(t, ctx, chromedp.Click(chromedp.CSS(`section.set .rec-next`)), chromedp.WaitVisible(chromedp.CSS(`.rec[data-seq="10"]`)))
	pos := text(t, ctx, `.rec-pos`)
	firstLabel := text(t, ctx, `.rec[data-seq="10"] .rec-stream[data-stream="labels"] pre`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`section.set .grid-next`)), chromedp.WaitVisible(chromedp.CSS(`.thumb[data-seq="100"]`)))
	eval[int](t, ctx, imagesLoaded)
	gridPos := text(t, ctx, `.grid-pos`)
	if pos != "records 10–19 of 2,000" {
		t.Errorf("after next: %q", pos)
	}
	if want := fmt.Sprintf("[%d]", lab[10]); firstLabel != want {
		t.Errorf("record 10's label: %q, the IDX label %s", firstLabel, want)
	}
	if !strings.Contains(gridPos, "records 100–199 of 2,000") {
		t.Errorf("grid after next: %q", gridPos)
	}
	checkGrid(100)
	paged := screenshot(t, ctx)
	os.WriteFile(filepath.Join(screenshotDir(t), "view-mnist-paged.png"), paged, 0o644)
	if errs := consoleErrs(); len(errs) > 0 {
		t.Errorf("console errors after paging: %v", errs)
	}

	// Without the token the server refuses, in the browser (localhost: no cookie) and to a
	// plain client; with another Host header too.
	base := url[:strings.Index(url, "/?token=")]
	port := base[strings.LastIndex(base, ":")+1:]
	do(t, ctx, chromedp.Navigate("http://localhost:"+port+"/"))
	body := text(t, ctx, "body")
	if !strings.Contains(body, "forbidden") {
		t.Errorf("the page without the token shows %q", body)
	}
	for _, target := range []string{base + "/", base + "/api/info", base + "/api/image?seq=0", base + "/?token=00000000000000000000000000000000"} {
		resp, err := http.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", target, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Host = "rebound.example:" + port
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another Host header with the token: %d, want 403", resp.StatusCode)
	}
}

func TestViewBrowserFormats(t *testing.T) {
	ctx, consoleErrs := browser(t)
	dir := t.TempDir()
	td := filepath.Join("..", "..", "testdata")
	ctf := filepath.Join(dir, "sparse.ctf")
	if _, stderr, code := run(t, "convert", "-q", filepath.Join(td, "cntk", "cbf", "10x10_sparse.bin"), ctf); code != 0 {
		t.Fatal(stderr)
	}
	shards := filepath.Join(dir, "shards")
	mnistArgs := []string{filepath.Join(td, "mnist", "t10k-images-idx3-ubyte.gz"), filepath.Join(td, "mnist", "t10k-labels-idx1-ubyte.gz")}
	if _, stderr, code := run(t, append(append([]string{"convert", "-q", "--shards", "3", "--to", "npz"}, mnistArgs...), shards)...); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		name, format string
		args         func(t *testing.T) []string
	}{
		{"view-ctf", "ctf", func(*testing.T) []string { return []string{ctf} }},
		{"view-ctf-jagged", "ctf", func(t *testing.T) []string {
			// CNTK's sparse CTF of sequences of 1 to 99 samples (shared corpus only).
			return []string{testutil.Shared(t, "cntk", "ctf", "100x100_jagged_sequences_sparse.txt")}
		}},
		{"view-idv", "idv", func(*testing.T) []string { return []string{filepath.Join(td, "idv", "datatypes.idv")} }},
		{"view-shards", "npz", func(*testing.T) []string { return []string{shards} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args(t)
			url := startView(t, args...)
			loadPage(t, ctx, consoleErrs, url, c.name)
			sets := readPage(t, ctx)
			if len(sets) != 1 || sets[0].Format != c.format {
				t.Fatalf("page %+v", sets)
			}
			checkCounts(t, sets[0], args...)
			if eval[int](t, ctx, `document.querySelectorAll(".rec").length`) == 0 {
				t.Error("no records shown")
			}
		})
	}

	// Two data sets side by side: the shards hold the same values as the IDX files.
	url := startView(t, append(append(mnistArgs, "--"), shards)...)
	loadPage(t, ctx, consoleErrs, url, "view-compare")
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#diff.same, #diff.differ`)))
	diff := text(t, ctx, `#diff`)
	if diff != "The two data sets hold the same values." {
		t.Errorf("comparison: %q", diff)
	}
	sets := readPage(t, ctx)
	if len(sets) != 2 || sets[0].Format != "idx" || sets[1].Format != "npz" {
		t.Fatalf("page %+v", sets)
	}
	checkCounts(t, sets[1], shards)
}
