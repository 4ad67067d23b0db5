package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestViewUsage(t *testing.T) {
	img := filepath.Join("..", "..", "testdata", "mnist", "t10k-images-idx3-ubyte.gz")
	for _, args := range [][]string{
		{"view"},
		{"view", img, "--"},
		{"view", "--", img},
		{"view", "--port", "70000", img},
		{"view", "--port", "-1", img},
		{"view", "--limit", "-1", img},
	} {
		if _, stderr, code := run(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, want 2 with a message: %s", args, code, stderr)
		}
	}
	if _, stderr, code := run(t, "view", filepath.Join(t.TempDir(), "absent.idx")); code == 0 || !strings.Contains(stderr, "absent.idx") {
		t.Errorf("an absent file: exit %d: %s", code, stderr)
	}
}

// TestViewServes runs mlfeed view without a browser: the address it prints opens the page,
// the JSON lists the streams, and Ctrl-C ends it with the status of an interrupt.
func TestViewServes(t *testing.T) {
	d := filepath.Join("..", "..", "testdata", "mnist")
	url := startView(t, filepath.Join(d, "t10k-images-idx3-ubyte.gz"), filepath.Join(d, "t10k-labels-idx1-ubyte.gz"))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.RawQuery != "" || !strings.Contains(string(page), "mlfeed view") {
		t.Fatalf("page: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	base := url[:strings.Index(url, "/?token=")]
	resp, err = c.Get(base + "/api/info")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Sets []struct {
			Format    string `json:"format"`
			Sequences int64  `json:"sequences"`
			Streams   []struct {
				Name string `json:"name"`
			} `json:"streams"`
		} `json:"sets"`
	}
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || len(info.Sets) != 1 || info.Sets[0].Format != "idx" || info.Sets[0].Sequences != 2000 || len(info.Sets[0].Streams) != 2 {
		t.Fatalf("info %+v %v", info, err)
	}
	if resp, err := http.Get(base + "/api/info"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("without the cookie: %v %v", resp, err)
	}
}

func TestViewInterrupted(t *testing.T) {
	cmd := exec.Command(bin, "view", filepath.Join("..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte.gz"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 200)
	n, _ := io.ReadAtLeast(stderr, buf, len("mlfeed view: serving on http://127.0.0.1:"))
	if !strings.HasPrefix(string(buf[:n]), "mlfeed view: serving on http://127.0.0.1:") {
		t.Fatalf("stderr %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stderr); done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mlfeed view did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130", code)
	}
}
