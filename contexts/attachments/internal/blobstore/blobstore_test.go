package blobstore_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/blobstore/storetest"
	"github.com/omlhub/oml/platform/ids"
)

func TestFileStore(t *testing.T) {
	s, err := blobstore.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, s, "t1")
	if _, err := s.Begin(context.Background(), "../escape"); err == nil {
		t.Fatal("a key leaving the directory was accepted")
	}
}

// testS3 connects to the test S3 server (Versity S3 Gateway from make
// test); a missing server fails, never skips.
func testS3(t *testing.T) *blobstore.S3 {
	t.Helper()
	endpoint := os.Getenv("OML_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Fatal("OML_TEST_S3_ENDPOINT is not set: run the tests with `make test`, which starts Versity S3 Gateway (scripts/s3.sh)")
	}
	bucket := "oml-store-" + strings.ToLower(ids.Suffix(ids.New(ids.Request)))
	s, err := blobstore.NewS3(context.Background(), blobstore.S3Config{
		Bucket: bucket, Endpoint: endpoint, Region: "us-east-1",
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3Store(t *testing.T) {
	storetest.Run(t, testS3(t), "t1")
}

// TestS3ReplicasCreateTheBucketTogether: replicas starting at once race
// to create a missing bucket; every one of them opens the store (the
// losers hear BucketAlreadyOwnedByYou, found by the soak).
func TestS3ReplicasCreateTheBucketTogether(t *testing.T) {
	testS3(t) // fails when there is no S3
	bucket := "oml-race-" + strings.ToLower(ids.Suffix(ids.New(ids.Request)))
	errc := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := blobstore.NewS3(context.Background(), blobstore.S3Config{
				Bucket: bucket, Endpoint: os.Getenv("OML_TEST_S3_ENDPOINT"), Region: "us-east-1",
				AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
			})
			errc <- err
		}()
	}
	for range 4 {
		if err := <-errc; err != nil {
			t.Fatalf("a replica could not open the store another was creating: %v", err)
		}
	}
}

func TestS3UnavailableIsTyped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := blobstore.NewS3(ctx, blobstore.S3Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", AccessKey: "k", SecretKey: "s"})
	if !errors.Is(err, blobstore.ErrUnavailable) {
		t.Fatalf("unreachable S3: %v", err)
	}
}

func TestOpenSpecs(t *testing.T) {
	dir := t.TempDir()
	if _, err := blobstore.Open(context.Background(), "file://"+dir, os.Getenv); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"file://relative/dir", "ftp://x", "s3://"} {
		if _, err := blobstore.Open(context.Background(), bad, os.Getenv); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
