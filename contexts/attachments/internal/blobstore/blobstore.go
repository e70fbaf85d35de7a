// Package blobstore holds the attachments context's two object stores: S3
// (any S3 API; path-style endpoints) and a directory on local disk for
// `make run`. Both keep sealed objects under opaque keys and take uploads
// in numbered parts, as S3 multipart uploads do; both pass the contract
// suite in storetest.
package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// ErrUnavailable wraps a failure to reach the store: the operation may
// succeed when retried.
var ErrUnavailable = errors.New("blob store unavailable")

// ErrNotFound is returned for a missing object or upload.
var ErrNotFound = errors.New("blob store: not found")

// Store is an object store with multipart uploads.
type Store interface {
	// Begin starts a multipart upload of key and returns its id.
	Begin(ctx context.Context, key string) (string, error)
	// PutPart stores part n (1-based) of an upload from size bytes of body,
	// replacing any earlier body of that part, and returns its entity tag.
	// A body that fails or ends short stores nothing.
	PutPart(ctx context.Context, key, upload string, n int, body io.Reader, size int64) (string, error)
	// Complete assembles the parts, in order, into the object key.
	Complete(ctx context.Context, key, upload string, etags []string) error
	// Abort discards an upload and its parts; an unknown upload is fine.
	Abort(ctx context.Context, key, upload string) error
	// ReadAt returns n bytes of an object from off.
	ReadAt(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Size returns an object's length (ErrNotFound when absent).
	Size(ctx context.Context, key string) (int64, error)
	// Delete removes an object; a missing one is fine.
	Delete(ctx context.Context, key string) error
}

// Open returns the store OML_BLOB_STORE names: file:///abs/dir or
// s3://bucket?endpoint=http://host:port&region=us-east-1 (credentials
// from the AWS_* environment variables).
func Open(ctx context.Context, spec string, getenv func(string) string) (Store, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("blob store %q: %w", spec, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("blob store %q: want file:///absolute/dir", spec)
		}
		return NewFile(u.Path)
	case "s3":
		q := u.Query()
		return NewS3(ctx, S3Config{
			Bucket: u.Host, Endpoint: q.Get("endpoint"), Region: q.Get("region"),
			AccessKey: getenv("AWS_ACCESS_KEY_ID"), SecretKey: getenv("AWS_SECRET_ACCESS_KEY"),
		})
	}
	return nil, fmt.Errorf("blob store %q: want file:// or s3://", spec)
}
