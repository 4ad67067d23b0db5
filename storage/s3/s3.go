// Package s3 registers the s3:// driver of package storage: s3://bucket/key names an object
// in AWS S3 or an S3-compatible server. Import it for its side effect:
//
//	import _ "github.com/mlfeed/mlfeed/storage/s3"
//
// Credentials and region come from the AWS SDK's standard chain: the environment
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_REGION, ...), the shared config and credentials files
// with their profiles, web identity, SSO, and the instance's or container's role.
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL names an S3-compatible server, which is then
// addressed by path (as such servers expect). Query parameters after the key set, for that
// URL's bucket: region, endpoint, profile, use_path_style (true/false).
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/mlfeed/mlfeed/storage"
)

func init() {
	storage.Register("s3", open, "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_REGION", "AWS_ACCESS_KEY_ID")
}

// open opens the bucket host with the settings of query.
func open(ctx context.Context, host string, query url.Values) (storage.Bucket, error) {
	var opts []func(*config.LoadOptions) error
	for k := range query {
		switch k {
		case "region", "endpoint", "profile", "use_path_style":
		default:
			return nil, fmt.Errorf("s3: unknown URL parameter %q (known: region, endpoint, profile, use_path_style)", k)
		}
	}
	if r := query.Get("region"); r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	if p := query.Get("profile"); p != "" {
		opts = append(opts, config.WithSharedConfigProfile(p))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	endpoint := query.Get("endpoint")
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	pathStyle := endpoint != ""
	if v := query.Get("use_path_style"); v != "" {
		if pathStyle, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("s3: use_path_style=%q: want true or false", v)
		}
	}
	if cfg.Region == "" {
		// S3 needs a region to sign with; an S3-compatible server usually ignores it.
		cfg.Region = "us-east-1"
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	return &bucket{name: host, c: c}, nil
}

type bucket struct {
	name string
	c    *s3.Client
}

// wrap maps S3's errors onto the standard library's sentinels.
func wrap(err error) error {
	var nk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nk) || errors.As(err, &nf) {
		return fmt.Errorf("%w (%v)", os.ErrNotExist, err)
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchBucket":
			return fmt.Errorf("%w (%v)", os.ErrNotExist, err)
		case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch":
			return fmt.Errorf("%w (%v)", os.ErrPermission, err)
		}
	}
	return err
}

func (b *bucket) Attributes(ctx context.Context, key string) (storage.Attributes, error) {
	out, err := b.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		return storage.Attributes{}, wrap(err)
	}
	return storage.Attributes{Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag)}, nil
}

func (b *bucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*storage.Range, error) {
	var rng string
	switch {
	case off < 0:
		rng = fmt.Sprintf("bytes=%d", off)
	case length < 0:
		rng = fmt.Sprintf("bytes=%d-", off)
	case length == 0:
		return nil, errors.New("s3: empty range")
	default:
		rng = fmt.Sprintf("bytes=%d-%d", off, off+length-1)
	}
	out, err := b.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &key, Range: &rng})
	if err != nil {
		return nil, wrap(err)
	}
	r := &storage.Range{ReadCloser: out.Body, ETag: aws.ToString(out.ETag)}
	// Content-Range: bytes FIRST-LAST/SIZE; a server that ignores the range sends it all.
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		r.Size = aws.ToInt64(out.ContentLength)
		if off > 0 {
			out.Body.Close()
			return nil, fmt.Errorf("s3: the server ignored the range %s", rng)
		}
		return r, nil
	}
	if _, err := fmt.Sscanf(strings.TrimPrefix(cr, "bytes "), "%d-", &r.Offset); err != nil {
		out.Body.Close()
		return nil, fmt.Errorf("s3: Content-Range %q: %v", cr, err)
	}
	if i := strings.LastIndexByte(cr, '/'); i >= 0 {
		r.Size, err = strconv.ParseInt(cr[i+1:], 10, 64)
	}
	if err != nil || r.Size < 0 {
		out.Body.Close()
		return nil, fmt.Errorf("s3: Content-Range %q without the object's size", cr)
	}
	return r, nil
}

func (b *bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.c, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &prefix, Delimiter: aws.String("/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

func (b *bucket) Delete(ctx context.Context, key string) error {
	_, err := b.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: &key})
	return wrap(err)
}

// NewWriter uploads through a pipe with the SDK's transfer manager: one PutObject for a small
// object, a multipart upload (aborted on failure or cancellation) for a large one.
func (b *bucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	tm := transfermanager.New(b.c)
	return storage.NewPipeWriter(ctx, func(body io.Reader) error {
		_, err := tm.UploadObject(ctx, &transfermanager.UploadObjectInput{Bucket: &b.name, Key: &key, Body: body})
		return wrap(err)
	}), nil
}
