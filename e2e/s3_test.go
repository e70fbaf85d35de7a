package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/omlhub/oml/platform/ids"
)

// The S3 server the attachment tests rely on is up and speaks S3: a
// missing service fails the run rather than skipping.
func TestS3ServerAnswers(t *testing.T) {
	t.Parallel()
	endpoint := os.Getenv("OML_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Fatal("OML_TEST_S3_ENDPOINT is not set: run the tests with `make test`, which starts Versity S3 Gateway (scripts/s3.sh)")
	}
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
	})
	ctx := context.Background()
	bucket := "oml-e2e-" + strings.ToLower(ids.Suffix(ids.New(ids.Request)))
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket at %s: %v", endpoint, err)
	}
	key := "probe"
	payload := []byte("hello, object store")
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(payload)}); err != nil {
		t.Fatal(err)
	}
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if !bytes.Equal(body, payload) {
		t.Fatalf("read back %q", body)
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
}
