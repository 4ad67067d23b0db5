// Package azblob registers the azblob:// driver of package storage: azblob://container/key
// names a blob in Azure Blob Storage. Import it for its side effect:
//
//	import _ "github.com/mlfeed/mlfeed/storage/azblob"
//
// The account and credentials come from the environment, as Azure's tools take them:
// AZURE_STORAGE_CONNECTION_STRING (a connection string, the emulator's included); else
// AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY (a shared key) or AZURE_STORAGE_SAS_TOKEN, or
// with neither, azidentity's DefaultAzureCredential chain (environment service principal,
// workload identity, managed identity, the Azure CLI's login). AZURE_STORAGE_DOMAIN replaces
// blob.core.windows.net (sovereign clouds). The URL takes no query parameters.
package azblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	az "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/mlfeed/mlfeed/storage"
)

func init() {
	storage.Register("azblob", open, "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_DOMAIN")
}

func open(ctx context.Context, host string, query url.Values) (storage.Bucket, error) {
	if len(query) > 0 {
		return nil, errors.New("azblob: azblob:// URLs take no query parameters")
	}
	c, err := client()
	if err != nil {
		return nil, fmt.Errorf("azblob: %w", err)
	}
	return &bucket{c: c.ServiceClient().NewContainerClient(host)}, nil
}

// client makes the service client from the environment.
func client() (*az.Client, error) {
	if cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		return az.NewClientFromConnectionString(cs, nil)
	}
	account := os.Getenv("AZURE_STORAGE_ACCOUNT")
	if account == "" {
		return nil, errors.New("set AZURE_STORAGE_ACCOUNT (or AZURE_STORAGE_CONNECTION_STRING)")
	}
	domain := os.Getenv("AZURE_STORAGE_DOMAIN")
	if domain == "" {
		domain = "blob.core.windows.net"
	}
	svc := "https://" + account + "." + domain + "/"
	if key := os.Getenv("AZURE_STORAGE_KEY"); key != "" {
		cred, err := az.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, err
		}
		return az.NewClientWithSharedKeyCredential(svc, cred, nil)
	}
	if sas := os.Getenv("AZURE_STORAGE_SAS_TOKEN"); sas != "" {
		return az.NewClientWithNoCredential(svc+"?"+strings.TrimPrefix(sas, "?"), nil)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, err
	}
	return az.NewClient(svc, cred, nil)
}

type bucket struct {
	c *container.Client
}

// wrap maps the service's error codes onto the standard library's sentinels.
func wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound, bloberror.ResourceNotFound):
		return fmt.Errorf("%w (%v)", os.ErrNotExist, err)
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.AuthorizationFailure, bloberror.InsufficientAccountPermissions):
		return fmt.Errorf("%w (%v)", os.ErrPermission, err)
	}
	return err
}

func (b *bucket) Attributes(ctx context.Context, key string) (storage.Attributes, error) {
	p, err := b.c.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return storage.Attributes{}, wrap(err)
	}
	a := storage.Attributes{Size: deref(p.ContentLength, 0)}
	if p.ETag != nil {
		a.ETag = string(*p.ETag)
	}
	return a, nil
}

func (b *bucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*storage.Range, error) {
	if off < 0 {
		return nil, fmt.Errorf("azblob: suffix ranges: %w", errors.ErrUnsupported)
	}
	if length == 0 {
		return nil, errors.New("azblob: empty range")
	}
	rng := blob.HTTPRange{Offset: off}
	if length > 0 {
		rng.Count = length
	}
	resp, err := b.c.NewBlobClient(key).DownloadStream(ctx, &blob.DownloadStreamOptions{Range: rng})
	if err != nil {
		return nil, wrap(err)
	}
	r := &storage.Range{ReadCloser: resp.Body, Offset: off}
	if resp.ETag != nil {
		r.ETag = string(*resp.ETag)
	}
	cr := deref(resp.ContentRange, "")
	if i := strings.LastIndexByte(cr, '/'); i >= 0 {
		if _, err := fmt.Sscan(cr[i+1:], &r.Size); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("azblob: Content-Range %q", cr)
		}
	} else {
		r.Size = deref(resp.ContentLength, 0) // the whole blob
	}
	return r, nil
}

func (b *bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := b.c.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: &prefix})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap(err)
		}
		for _, it := range page.Segment.BlobItems {
			if it.Name != nil {
				keys = append(keys, *it.Name)
			}
		}
	}
	return keys, nil
}

func (b *bucket) Delete(ctx context.Context, key string) error {
	_, err := b.c.NewBlobClient(key).Delete(ctx, nil)
	return wrap(err)
}

// NewWriter uploads a block blob through a pipe: the blocks are staged as they are written
// and committed in one request at Close, so nothing appears before, and a cancelled upload
// commits nothing.
func (b *bucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	bb := b.c.NewBlockBlobClient(key)
	return storage.NewPipeWriter(ctx, func(body io.Reader) error {
		_, err := bb.UploadStream(ctx, body, nil)
		return wrap(err)
	}), nil
}

// deref returns *p, or def for a nil p.
func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
