// Package storetest is the contract every blob store passes.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"testing"

	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
)

func put(s blobstore.Store, key, upload string, n int, body []byte) (string, error) {
	// A stream, as the server hands it over: a pipe fed segment by segment.
	pr, pw := io.Pipe()
	go func(rest []byte) {
		for len(rest) > 0 {
			k := min(len(rest), 64<<10+16)
			if _, err := pw.Write(rest[:k]); err != nil {
				return
			}
			rest = rest[k:]
		}
		pw.Close()
	}(body)
	return s.PutPart(context.Background(), key, upload, n, pr, int64(len(body)))
}

// failing yields some bytes, then an error.
type failing struct{ left int }

func (f *failing) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, errors.New("client went away")
	}
	n := min(len(p), f.left)
	f.left -= n
	return n, nil
}

// Run checks a store against the contract. Keys are made unique per run
// with prefix.
func Run(t *testing.T, s blobstore.Store, prefix string) {
	ctx := context.Background()
	part := func(n int) []byte {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return b
	}
	t.Run("multipart round trip", func(t *testing.T) {
		key := prefix + "/round-trip"
		up, err := s.Begin(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		p1, p2 := part(5<<20+3), part(1000)
		e1, err := put(s, key, up, 1, p1)
		if err != nil {
			t.Fatal(err)
		}
		// A part written again replaces the first body.
		if _, err := put(s, key, up, 2, part(10)); err != nil {
			t.Fatal(err)
		}
		// A body that fails half-way leaves the part as it was.
		if _, err := s.PutPart(ctx, key, up, 2, &failing{left: 500}, 1000); err == nil {
			t.Fatal("a failing body was stored")
		}
		e2, err := put(s, key, up, 2, p2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Size(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("object visible before completion: %v", err)
		}
		if err := s.Complete(ctx, key, up, []string{e1, e2}); err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Clone(p1), p2...)
		if n, err := s.Size(ctx, key); err != nil || n != int64(len(want)) {
			t.Fatalf("size %d, %v", n, err)
		}
		got, err := s.ReadAt(ctx, key, 5<<20-10, 20)
		if err != nil || !bytes.Equal(got, want[5<<20-10:5<<20+10]) {
			t.Fatalf("range across parts: %v", err)
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadAt(ctx, key, 0, 1); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("read after delete: %v", err)
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Fatalf("deleting a missing object: %v", err)
		}
	})
	t.Run("abort leaves nothing", func(t *testing.T) {
		key := prefix + "/aborted"
		up, err := s.Begin(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := put(s, key, up, 1, part(100)); err != nil {
			t.Fatal(err)
		}
		if err := s.Abort(ctx, key, up); err != nil {
			t.Fatal(err)
		}
		if err := s.Abort(ctx, key, up); err != nil {
			t.Fatalf("aborting twice: %v", err)
		}
		if _, err := s.Size(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("aborted upload left an object: %v", err)
		}
		if _, err := put(s, key, up, 2, part(100)); err == nil {
			t.Fatal("a part was accepted for an aborted upload")
		}
	})
	t.Run("single empty part", func(t *testing.T) {
		key := prefix + "/small"
		up, err := s.Begin(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		e, err := put(s, key, up, 1, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, key, up, []string{e}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ReadAt(ctx, key, 0, 1); err != nil || string(got) != "x" {
			t.Fatalf("read %q, %v", got, err)
		}
		if got, err := s.ReadAt(ctx, key, 1, 0); err != nil || len(got) != 0 {
			t.Fatalf("empty read %q, %v", got, err)
		}
	})
}
