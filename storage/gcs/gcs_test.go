package gcs_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	_ "github.com/mlfeed/mlfeed/storage/gcs"
	"github.com/mlfeed/mlfeed/storage/storagetest"
)

// fakeGCS serves the part of Cloud Storage's JSON API the driver uses, as its reference
// documents it: object metadata, media downloads with Range, listings with prefix and
// delimiter (in pages), media uploads and deletes. It checks the requests' shape: a request
// the API would reject fails the test.
type fakeGCS struct {
	t       *testing.T
	mu      sync.Mutex
	objects map[string][]byte // by bucket/name
}

func (f *fakeGCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/upload/storage/v1/b/"):
		bucket := strings.TrimSuffix(strings.TrimPrefix(path, "/upload/storage/v1/b/"), "/o")
		if r.URL.Query().Get("uploadType") != "media" || r.URL.Query().Get("name") == "" {
			f.t.Errorf("upload %s: want uploadType=media and a name", r.URL)
			http.Error(w, "bad upload", http.StatusBadRequest)
			return
		}
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client gave up: no object
		}
		f.mu.Lock()
		f.objects[bucket+"/"+r.URL.Query().Get("name")] = data
		f.mu.Unlock()
		fmt.Fprintf(w, `{"name": %q, "size": "%d"}`, r.URL.Query().Get("name"), len(data))
	case strings.HasPrefix(path, "/storage/v1/b/") && strings.Contains(path, "/o/"):
		rest := strings.TrimPrefix(path, "/storage/v1/b/")
		i := strings.Index(rest, "/o/")
		name, err := unescape(rest[i+3:])
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := rest[:i] + "/" + name
		f.mu.Lock()
		data, ok := f.objects[key]
		if ok && r.Method == http.MethodDelete {
			delete(f.objects, key)
		}
		f.mu.Unlock()
		if !ok {
			http.Error(w, `{"error": {"code": 404, "message": "No such object"}}`, http.StatusNotFound)
			return
		}
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Query().Get("alt") == "media":
			w.Header().Set("ETag", `"e1"`)
			serveRange(w, r, data)
		default:
			fmt.Fprintf(w, `{"size": "%d", "etag": "e1"}`, len(data))
		}
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/storage/v1/b/") && strings.HasSuffix(path, "/o"):
		bucket := strings.TrimSuffix(strings.TrimPrefix(path, "/storage/v1/b/"), "/o")
		q := r.URL.Query()
		if q.Get("delimiter") != "/" {
			f.t.Errorf("list %s: want delimiter=/", r.URL)
		}
		var names []string
		f.mu.Lock()
		for k := range f.objects {
			if n, ok := strings.CutPrefix(k, bucket+"/"+q.Get("prefix")); ok && !strings.Contains(n, "/") {
				names = append(names, strings.TrimPrefix(k, bucket+"/"))
			}
		}
		f.mu.Unlock()
		sort.Strings(names) // the API lists in name order, which pages rely on
		// One object a page, to exercise paging.
		start, _ := strconv.Atoi(q.Get("pageToken"))
		page := map[string]any{"items": []map[string]string{}}
		if start < len(names) {
			page["items"] = []map[string]string{{"name": names[start]}}
			if start+1 < len(names) {
				page["nextPageToken"] = strconv.Itoa(start + 1)
			}
		}
		json.NewEncoder(w).Encode(page)
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.Error(w, "not found", http.StatusNotFound)
	}
}

// unescape decodes a path segment as the API does (%2F is a slash in an object name).
func unescape(s string) (string, error) {
	r := strings.NewReplacer("%2F", "/", "%2f", "/")
	return urlUnescape(r.Replace(s))
}

// serveRange answers a media download with the Range asked for: bytes=A-B, A- or -N.
func serveRange(w http.ResponseWriter, r *http.Request, data []byte) {
	size := int64(len(data))
	rng := r.Header.Get("Range")
	if rng == "" {
		w.Write(data)
		return
	}
	spec := strings.TrimPrefix(rng, "bytes=")
	a, b, _ := strings.Cut(spec, "-")
	var first, last int64
	if a == "" {
		n, _ := strconv.ParseInt(b, 10, 64)
		first, last = max(size-n, 0), size-1
	} else {
		first, _ = strconv.ParseInt(a, 10, 64)
		last = size - 1
		if b != "" {
			last, _ = strconv.ParseInt(b, 10, 64)
			last = min(last, size-1)
		}
	}
	if first >= size {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, size))
	w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
	w.WriteHeader(http.StatusPartialContent)
	w.Write(data[first : last+1])
}

func TestConformance(t *testing.T) {
	srv := httptest.NewServer(&fakeGCS{t: t, objects: map[string][]byte{}})
	defer srv.Close()
	t.Setenv("STORAGE_EMULATOR_HOST", srv.URL)
	storagetest.Run(t, "gs://bucket/conformance/")
}

func urlUnescape(s string) (string, error) { return url.PathUnescape(s) }
