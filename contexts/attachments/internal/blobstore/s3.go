package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3Config locates a bucket.
type S3Config struct {
	Bucket    string
	Endpoint  string // e.g. http://127.0.0.1:9000; empty for AWS
	Region    string
	AccessKey string
	SecretKey string
}

// S3 is a store in one bucket of any S3 API, path-style.
type S3 struct {
	client  *s3.Client
	presign *s3.PresignClient
	http    *http.Client
	bucket  string
}

// NewS3 connects to the bucket, creating it when it does not exist.
func NewS3(ctx context.Context, c S3Config) (*S3, error) {
	if c.Bucket == "" {
		return nil, errors.New("blob store: s3:// needs a bucket name")
	}
	opts := s3.Options{
		Region:       c.Region,
		UsePathStyle: true,
		HTTPClient:   &http.Client{Timeout: 5 * time.Minute},
		// Parts are sealed (authenticated) before they leave; the SDK's
		// extra CRC over every request body would only cost CPU.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           3,
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
	}
	if c.AccessKey != "" {
		opts.Credentials = credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, "")
	}
	client := s3.New(opts)
	s := &S3{client: client, presign: s3.NewPresignClient(client), http: opts.HTTPClient.(*http.Client), bucket: c.Bucket}
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		if !isNotFound(err) {
			return nil, fmt.Errorf("blob store bucket %s: %w", c.Bucket, classify(err))
		}
		// Replicas starting together race to create it: the loser's
		// BucketAlreadyOwnedByYou means the bucket is there.
		var owned *types.BucketAlreadyOwnedByYou
		if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &s.bucket}); err != nil && !errors.As(err, &owned) {
			return nil, fmt.Errorf("blob store: create bucket %s: %w", c.Bucket, classify(err))
		}
	}
	return s, nil
}

func (s *S3) Begin(ctx context.Context, key string) (string, error) {
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return "", classify(err)
	}
	return aws.ToString(out.UploadId), nil
}

// PutPart streams the part as it is produced: a presigned UploadPart
// request (an unsigned payload, so the body is read once and need not be
// seekable) sent with a plain HTTP client. The bytes are sealed
// (authenticated) before they leave, so a payload hash in the signature
// would add nothing. A stream cannot be replayed, so nothing retries it;
// the client sends the part again.
func (s *S3) PutPart(ctx context.Context, key, upload string, n int, body io.Reader, size int64) (string, error) {
	signed, err := s.presign.PresignUploadPart(ctx, &s3.UploadPartInput{
		Bucket: &s.bucket, Key: &key, UploadId: &upload, PartNumber: aws.Int32(int32(n)), ContentLength: aws.Int64(size),
	}, s3.WithPresignExpires(15*time.Minute))
	if err != nil {
		return "", classify(err)
	}
	req, err := http.NewRequestWithContext(ctx, signed.Method, signed.URL, io.NopCloser(body))
	if err != nil {
		return "", err
	}
	req.ContentLength = size
	for k, v := range signed.SignedHeader {
		if !strings.EqualFold(k, "host") && !strings.EqualFold(k, "content-length") {
			req.Header[k] = v
		}
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: upload part %d of %s: %v", ErrUnavailable, n, key, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusOK:
		return resp.Header.Get("ETag"), nil
	case resp.StatusCode == http.StatusNotFound:
		return "", fmt.Errorf("%w: upload part %d of %s: %s", ErrNotFound, n, key, reply)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return "", fmt.Errorf("%w: upload part %d of %s: HTTP %d: %s", ErrUnavailable, n, key, resp.StatusCode, reply)
	}
	return "", fmt.Errorf("upload part %d of %s: HTTP %d: %s", n, key, resp.StatusCode, reply)
}

func (s *S3) Complete(ctx context.Context, key, upload string, etags []string) error {
	parts := make([]types.CompletedPart, len(etags))
	for i, etag := range etags {
		parts[i] = types.CompletedPart{ETag: aws.String(etag), PartNumber: aws.Int32(int32(i + 1))}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: &upload, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	return classify(err)
}

func (s *S3) Abort(ctx context.Context, key, upload string) error {
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &upload})
	if err != nil && isNotFound(err) {
		return nil
	}
	return classify(err)
}

func (s *S3) ReadAt(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: &key, Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	})
	if err != nil {
		return nil, classify(err)
	}
	defer out.Body.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(out.Body, buf); err != nil {
		return nil, fmt.Errorf("object %s [%d, %d): %w", key, off, off+n, classify(err))
	}
	return buf, nil
}

func (s *S3) Size(ctx context.Context, key string) (int64, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return 0, classify(err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil && isNotFound(err) {
		return nil
	}
	return classify(err)
}

// isNotFound recognises a missing bucket, key or upload.
func isNotFound(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NotFound", "NoSuchKey", "NoSuchUpload", "NoSuchBucket":
			return true
		}
	}
	var re interface{ HTTPStatusCode() int }
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// classify maps SDK errors onto ErrNotFound and ErrUnavailable (network
// failures, timeouts, 5xx, throttling).
func classify(err error) error {
	if err == nil {
		return nil
	}
	if isNotFound(err) {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	var netErr net.Error
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &re) && (re.HTTPStatusCode() >= 500 || re.HTTPStatusCode() == http.StatusTooManyRequests)) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var opErr *smithy.OperationError
	if errors.As(err, &opErr) && !errors.As(err, new(smithy.APIError)) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err) // the request never got an answer
	}
	return err
}
