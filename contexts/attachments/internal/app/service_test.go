package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

// content is a two-part upload: a whole part of MinPartSize, then a short
// last one.
func content(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, domain.MinPartSize+1000)
	_, _ = rand.Read(b)
	return b
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func open(t *testing.T, b bundle, ctx context.Context, body []byte, expected string) domain.Session {
	t.Helper()
	ses, err := b.svc.Open(ctx, domain.OpenRequest{MediaType: "application/pdf", Size: int64(len(body)), ExpectedDigest: expected, PartSize: domain.MinPartSize})
	if err != nil {
		t.Fatal(err)
	}
	return ses
}

func part(ses domain.Session, n int, body []byte) app.Part {
	from := int64(n-1) * ses.PartSize
	chunk := body[from:min(int64(len(body)), from+ses.PartSize)]
	return app.Part{Session: ses.ID, N: n, Body: bytes.NewReader(chunk), Length: int64(len(chunk))}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	good := domain.OpenRequest{MediaType: "application/pdf", Size: 1 << 20, ExpectedDigest: digest([]byte("x"))}
	for _, c := range []struct {
		name  string
		edit  func(*domain.OpenRequest)
		prep  func(b bundle)
		want  errs.Code
		retry bool
	}{
		{"valid", nil, nil, "", false},
		{"not a media type", func(r *domain.OpenRequest) { r.MediaType = "pdf" }, nil, errs.Validation, false},
		{"digest without its algorithm", func(r *domain.OpenRequest) { r.ExpectedDigest = r.ExpectedDigest[7:] }, nil, errs.Validation, false},
		{"digest too short", func(r *domain.OpenRequest) { r.ExpectedDigest = "sha256:abcd" }, nil, errs.Validation, false},
		{"negative size", func(r *domain.OpenRequest) { r.Size = -1 }, nil, errs.Validation, false},
		{"part size off the segment grid", func(r *domain.OpenRequest) { r.PartSize = domain.MinPartSize + 1 }, nil, errs.Validation, false},
		{"over the deployment's ceiling", func(r *domain.OpenRequest) { r.Size = 64<<20 + 1 }, nil, errs.LimitSize, false},
		{"over the tenant's ceiling", nil, func(b bundle) { b.repo.limit = 1 << 10 }, errs.LimitSize, false},
		{"open sessions per key", nil, func(b bundle) {
			for range 2 {
				if _, err := b.svc.Open(b.ctx, good); err != nil {
					t.Fatal(err)
				}
			}
		}, errs.LimitQuota, true},
		{"no writer access", nil, func(b bundle) { b.svc.Access = fakeAccess{writes: false} }, errs.Denied, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if c.prep != nil {
				c.prep(b)
			}
			req := good
			if c.edit != nil {
				c.edit(&req)
			}
			ses, err := b.svc.Open(b.ctx, req)
			if c.want == "" {
				if err != nil || ses.State != domain.Open || ses.PartsExpected() != 1 || ses.PartSize != domain.DefaultPartSize || !b.journal.has("attachment.open") {
					t.Fatalf("%+v, %v", ses, err)
				}
				return
			}
			if !errs.Is(err, c.want) || errs.From(err).Retryable != c.retry {
				t.Fatalf("%v, want %s (retryable %v)", err, c.want, c.retry)
			}
		})
	}
}

func TestPutPartOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := content(t)
	ses := open(t, b, b.ctx, body, digest(body))
	other := bytes.Repeat([]byte{7}, int(ses.PartSize))
	short := app.Part{Session: ses.ID, N: 1, Body: bytes.NewReader(body[:100]), Length: 100}
	for _, c := range []struct {
		name     string
		ctx      context.Context
		p        app.Part
		want     errs.Code
		received int
	}{
		{"the second part first", b.ctx, part(ses, 2, body), errs.UploadOutOfOrder, 0},
		{"a part past the last", b.ctx, app.Part{Session: ses.ID, N: 3, Body: bytes.NewReader(nil), Length: 0}, errs.UploadPartRange, 0},
		{"a short part", b.ctx, short, errs.UploadPartSize, 0},
		{"another key's session", as("mallory"), part(ses, 1, body), errs.NotFound, 0},
		{"the first part", b.ctx, part(ses, 1, body), "", 1},
		{"the first part again, same bytes", b.ctx, part(ses, 1, body), "", 1},
		{"the first part again, other bytes", b.ctx, app.Part{Session: ses.ID, N: 1, Body: bytes.NewReader(other), Length: int64(len(other))}, errs.UploadPartDiffer, 1},
	} {
		got, err := b.svc.PutPart(c.ctx, c.p)
		if c.want == "" && err != nil || c.want != "" && !errs.Is(err, c.want) {
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		}
		if err == nil && got.PartsReceived != c.received {
			t.Fatalf("%s: answered %d parts received, want %d", c.name, got.PartsReceived, c.received)
		}
		if stored, _ := b.svc.Status(b.ctx, ses.ID); stored.PartsReceived != c.received || stored.State != domain.Open {
			t.Fatalf("%s: stored %s, want %d parts received and open", c.name, stored, c.received)
		}
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		wrong bool // the declared digest is not the bytes'
	}{{"digest matches", false}, {"digest mismatch", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			body := content(t)
			declared := digest(body)
			if c.wrong {
				declared = digest(append([]byte("not "), body...))
			}
			ses := open(t, b, b.ctx, body, declared)
			if _, err := b.svc.PutPart(b.ctx, part(ses, 1, body)); err != nil {
				t.Fatal(err)
			}
			got, err := b.svc.PutPart(b.ctx, part(ses, 2, body))
			stored, _ := b.svc.Status(b.ctx, ses.ID)
			_, blobErr := b.repo.BlobGet(b.ctx, tenant, ses.ExpectedSHA256)
			attached, bindErr := b.svc.Bind(b.ctx, tenant, "key_alice", "art_1", []string{ses.ID})
			if c.wrong {
				if !errs.Is(err, errs.DigestMismatch) || stored.State != domain.Aborted || stored.Reason != "digest mismatch" {
					t.Fatalf("%v; stored %s (%s), want upload.digest_mismatch and aborted", err, stored, stored.Reason)
				}
				if blobErr == nil || !errs.Is(bindErr, errs.UploadUnusable) || len(b.repo.bindings) != 0 || !b.journal.has("attachment.aborted") {
					t.Fatalf("mismatched bytes were kept or bound: blob %v, bind %v, bindings %v", blobErr, bindErr, b.repo.bindings)
				}
				return
			}
			if err != nil || got.State != domain.Complete || stored.State != domain.Complete || blobErr != nil || !b.journal.has("attachment.complete") {
				t.Fatalf("%v; answered %s, stored %s, blob %v", err, got, stored, blobErr)
			}
			if bindErr != nil || len(attached) != 1 || "sha256:"+attached[0].SHA256 != declared || attached[0].Size != int64(len(body)) {
				t.Fatalf("bind: %+v, %v", attached, bindErr)
			}
			if _, err := b.svc.PutPart(b.ctx, part(ses, 2, body)); err != nil {
				t.Fatalf("the last part again, same bytes: %v", err)
			}
		})
	}
}

// completed uploads a one-part file for ctx's key and returns its session.
func completed(t *testing.T, b bundle, ctx context.Context, text string) domain.Session {
	t.Helper()
	body := []byte(text)
	ses, err := b.svc.Open(ctx, domain.OpenRequest{MediaType: "text/plain", Size: int64(len(body)), ExpectedDigest: digest(body)})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = b.svc.PutPart(ctx, app.Part{Session: ses.ID, N: 1, Body: bytes.NewReader(body), Length: int64(len(body))}); err != nil || ses.State != domain.Complete {
		t.Fatalf("%s, %v", ses, err)
	}
	return ses
}

func TestBindRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine := completed(t, b, b.ctx, "quote: 412 USD/t")
	same := completed(t, b, b.ctx, "quote: 412 USD/t")
	bobs := completed(t, b, as("bob"), "bob's file")
	body := content(t)
	incomplete := open(t, b, b.ctx, body, digest(body))
	spare := completed(t, b, b.ctx, "a file never bound")
	for _, c := range []struct {
		name     string
		sessions []string
		want     errs.Code
	}{
		{"an unknown session", []string{"ups_01JZZZZZZZZZZZZZZZZZZZZZZZ"}, errs.UploadUnusable},
		{"another key's session", []string{bobs.ID}, errs.UploadUnusable},
		{"an incomplete session", []string{incomplete.ID}, errs.UploadUnusable},
		{"the same content twice", []string{mine.ID, same.ID}, errs.UploadUnusable},
		{"a complete session of its own", []string{mine.ID}, ""},
		{"a session bound already", []string{mine.ID}, errs.UploadUnusable},
		{"a good session beside a bound one", []string{spare.ID, mine.ID}, errs.UploadUnusable},
	} {
		_, err := b.svc.Bind(b.ctx, tenant, "key_alice", "art_"+c.name, c.sessions)
		if c.want == "" && err != nil || c.want != "" && !errs.Is(err, c.want) {
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if len(b.repo.bindings) != 1 || b.repo.bindings[0].SessionID != mine.ID {
		t.Fatalf("bindings = %+v, want the one good bind", b.repo.bindings)
	}
}
