// Package gcs registers the gs:// driver of package storage: gs://bucket/key names an object
// in Google Cloud Storage. Import it for its side effect:
//
//	import _ "github.com/mlfeed/mlfeed/storage/gcs"
//
// It speaks Cloud Storage's JSON API over HTTP with the credentials of Google's Application
// Default Credentials chain (golang.org/x/oauth2/google): GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's user credentials, workload identity and the metadata server. STORAGE_EMULATOR_HOST
// (host:port or a URL) names an emulator, used without credentials, as Google's client
// libraries do. The URL takes no query parameters.
package gcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/oauth2/google"

	"github.com/mlfeed/mlfeed/storage"
)

func init() {
	storage.Register("gs", open, "STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS")
}

// scope is the OAuth scope of reading and writing objects.
const scope = "https://www.googleapis.com/auth/devstorage.read_write"

func open(ctx context.Context, host string, query url.Values) (storage.Bucket, error) {
	if len(query) > 0 {
		return nil, errors.New("gcs: gs:// URLs take no query parameters")
	}
	b := &bucket{name: host, base: "https://storage.googleapis.com"}
	if e := os.Getenv("STORAGE_EMULATOR_HOST"); e != "" {
		if !strings.Contains(e, "://") {
			e = "http://" + e
		}
		b.base, b.c = strings.TrimSuffix(e, "/"), http.DefaultClient
		return b, nil
	}
	c, err := google.DefaultClient(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("gcs: credentials: %w", err)
	}
	b.c = c
	return b, nil
}

type bucket struct {
	name string
	base string // the API's root URL
	c    *http.Client
}

// objectURL is the JSON API's URL of the object key (its metadata; with alt=media its bytes).
func (b *bucket) objectURL(key string) string {
	return b.base + "/storage/v1/b/" + url.PathEscape(b.name) + "/o/" + url.PathEscape(key)
}

// do sends req and returns the response when its status is one of ok, else an error wrapping
// os.ErrNotExist or os.ErrPermission where the status says so.
func (b *bucket) do(req *http.Request, ok ...int) (*http.Response, error) {
	resp, err := b.c.Do(req)
	if err != nil {
		return nil, err
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			return resp, nil
		}
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	var apiErr struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	text := strings.TrimSpace(string(msg))
	if json.Unmarshal(msg, &apiErr) == nil && apiErr.Error.Message != "" {
		text = apiErr.Error.Message
	}
	err = fmt.Errorf("gcs: %s %s: %s", req.Method, resp.Status, text)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, fmt.Errorf("%w (%v)", os.ErrNotExist, err)
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("%w (%v)", os.ErrPermission, err)
	}
	return nil, err
}

func (b *bucket) Attributes(ctx context.Context, key string) (storage.Attributes, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.objectURL(key)+"?fields=size,etag", nil)
	if err != nil {
		return storage.Attributes{}, err
	}
	resp, err := b.do(req, http.StatusOK)
	if err != nil {
		return storage.Attributes{}, err
	}
	defer resp.Body.Close()
	var meta struct {
		Size string `json:"size"`
		ETag string `json:"etag"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta); err != nil {
		return storage.Attributes{}, fmt.Errorf("gcs: object metadata: %w", err)
	}
	size, err := strconv.ParseInt(meta.Size, 10, 64)
	if err != nil || size < 0 {
		return storage.Attributes{}, fmt.Errorf("gcs: object metadata: size %q", meta.Size)
	}
	return storage.Attributes{Size: size, ETag: meta.ETag}, nil
}

func (b *bucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*storage.Range, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.objectURL(key)+"?alt=media", nil)
	if err != nil {
		return nil, err
	}
	switch {
	case off < 0:
		req.Header.Set("Range", fmt.Sprintf("bytes=%d", off))
	case length < 0:
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
	case length == 0:
		return nil, errors.New("gcs: empty range")
	default:
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+length-1))
	}
	// The bytes as stored, not decompressed by the server (objects with gzip content
	// encoding), so that offsets are the object's.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := b.do(req, http.StatusOK, http.StatusPartialContent)
	if err != nil {
		return nil, err
	}
	r := &storage.Range{ReadCloser: resp.Body, ETag: resp.Header.Get("ETag")}
	if resp.StatusCode == http.StatusOK {
		// The whole object: the server ignored the range.
		if off > 0 {
			resp.Body.Close()
			return nil, fmt.Errorf("gcs: the server ignored the range %s", req.Header.Get("Range"))
		}
		r.Size = resp.ContentLength
		return r, nil
	}
	cr := resp.Header.Get("Content-Range")
	first, total, ok := parseContentRange(cr)
	if !ok {
		resp.Body.Close()
		return nil, fmt.Errorf("gcs: Content-Range %q", cr)
	}
	r.Offset, r.Size = first, total
	return r, nil
}

// parseContentRange parses "bytes FIRST-LAST/SIZE".
func parseContentRange(cr string) (first, size int64, ok bool) {
	rest, found := strings.CutPrefix(cr, "bytes ")
	span, total, found2 := strings.Cut(rest, "/")
	f, _, found3 := strings.Cut(span, "-")
	if !found || !found2 || !found3 {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(f, 10, 64)
	size, err2 := strconv.ParseInt(total, 10, 64)
	return first, size, err1 == nil && err2 == nil && first >= 0 && size >= 0
}

func (b *bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	token := ""
	for {
		q := url.Values{"prefix": {prefix}, "delimiter": {"/"}, "fields": {"items(name),nextPageToken"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/storage/v1/b/"+url.PathEscape(b.name)+"/o?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := b.do(req, http.StatusOK)
		if err != nil {
			return nil, err
		}
		var page struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
			NextPageToken string `json:"nextPageToken"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("gcs: listing: %w", err)
		}
		for _, it := range page.Items {
			keys = append(keys, it.Name)
		}
		if page.NextPageToken == "" || page.NextPageToken == token {
			return keys, nil
		}
		token = page.NextPageToken
	}
}

func (b *bucket) Delete(ctx context.Context, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.objectURL(key), nil)
	if err != nil {
		return err
	}
	resp, err := b.do(req, http.StatusOK, http.StatusNoContent)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// NewWriter uploads with one streaming media upload: Cloud Storage creates the object only
// when the request completes, so a cancelled upload leaves nothing.
func (b *bucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	u := b.base + "/upload/storage/v1/b/" + url.PathEscape(b.name) + "/o?" + url.Values{"uploadType": {"media"}, "name": {key}}.Encode()
	return storage.NewPipeWriter(ctx, func(body io.Reader) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := b.do(req, http.StatusOK)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}), nil
}
