package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

func TestOpenRequestValidate(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	good := OpenRequest{MediaType: "application/PDF; charset=binary", Size: 10, ExpectedDigest: digest}
	if _, err := good.Validate(1 << 20); err != nil || good.MediaType != "application/pdf" || good.PartSize != DefaultPartSize {
		t.Fatalf("good request: %v %+v", err, good)
	}
	for _, c := range []struct {
		req  OpenRequest
		code errs.Code
	}{
		{OpenRequest{MediaType: "pdf", Size: 1, ExpectedDigest: digest}, errs.Validation},
		{OpenRequest{MediaType: "a/b", Size: 1, ExpectedDigest: "sha256:abc"}, errs.Validation},
		{OpenRequest{MediaType: "a/b", Size: 1, ExpectedDigest: strings.Repeat("ab", 32)}, errs.Validation},
		{OpenRequest{MediaType: "a/b", Size: -1, ExpectedDigest: digest}, errs.Validation},
		{OpenRequest{MediaType: "a/b", Size: 2 << 20, ExpectedDigest: digest}, errs.LimitSize},
		{OpenRequest{MediaType: "a/b", Size: 1, ExpectedDigest: digest, PartSize: MinPartSize + 1}, errs.Validation},
		{OpenRequest{MediaType: "a/b", Size: 1, ExpectedDigest: digest, PartSize: MaxPartSize * 2}, errs.Validation},
	} {
		if _, err := c.req.Validate(1 << 20); !errs.Is(err, c.code) {
			t.Errorf("%+v: %v, want %s", c.req, err, c.code)
		}
	}
	huge := OpenRequest{MediaType: "a/b", Size: MaxParts*MinPartSize + 1, ExpectedDigest: digest, PartSize: MinPartSize}
	if _, err := huge.Validate(1 << 62); !errs.Is(err, errs.LimitSize) {
		t.Errorf("more than 10,000 parts: %v", err)
	}
}

func TestCheckPart(t *testing.T) {
	now := time.Now()
	s := Session{ID: "ups_x", State: Open, Size: 2*MinPartSize + 7, PartSize: MinPartSize, ExpiresAt: now.Add(time.Hour)}
	if s.PartsExpected() != 3 || s.PartLength(1) != MinPartSize || s.PartLength(3) != 7 || s.NextPart() != 1 {
		t.Fatalf("layout: %d parts, last %d, next %d", s.PartsExpected(), s.PartLength(3), s.NextPart())
	}
	for _, c := range []struct {
		n      int
		length int64
		want   errs.Code
	}{
		{2, MinPartSize, errs.UploadOutOfOrder},
		{0, MinPartSize, errs.UploadPartRange},
		{4, 7, errs.UploadPartRange},
		{1, MinPartSize + 1, errs.LimitSize},
		{1, MinPartSize - 1, errs.UploadPartSize},
	} {
		if _, err := s.CheckPart(c.n, c.length, now); !errs.Is(err, c.want) {
			t.Errorf("part %d (%d bytes): %v, want %s", c.n, c.length, err, c.want)
		}
	}
	if d, err := s.CheckPart(1, MinPartSize, now); err != nil || d != Store {
		t.Fatalf("next part: %v %v", d, err)
	}
	s.PartsReceived = 1
	if d, err := s.CheckPart(1, MinPartSize, now); err != nil || d != Repeat {
		t.Fatalf("received part: %v %v", d, err)
	}
	if _, err := s.CheckPart(2, MinPartSize, now.Add(2*time.Hour)); !errs.Is(err, errs.UploadExpired) {
		t.Fatalf("after expiry: %v", err)
	}
	s.State = Aborted
	if _, err := s.CheckPart(2, MinPartSize, now); !errs.Is(err, errs.UploadClosed) || s.NextPart() != 0 {
		t.Fatalf("aborted: %v", err)
	}
	empty := Session{State: Open, Size: 0, PartSize: MinPartSize, ExpiresAt: now.Add(time.Hour)}
	if empty.PartsExpected() != 1 || empty.PartLength(1) != 0 {
		t.Fatal("an empty file is one empty part")
	}
}

// The zero session a refusal returns has no parts and no next part; asking
// never divides by its zero part size.
func TestZeroSession(t *testing.T) {
	var s Session
	if s.PartsExpected() != 0 || s.NextPart() != 0 || s.String() == "" {
		t.Fatalf("zero session: %d parts, next %d", s.PartsExpected(), s.NextPart())
	}
	if _, err := s.CheckPart(1, 0, time.Now()); !errs.Is(err, errs.UploadPartRange) {
		t.Fatalf("part of the zero session: %v", err)
	}
}

func TestCheckBind(t *testing.T) {
	now := time.Now()
	ok := Session{ID: "ups_x", KeyID: "key_a", State: Complete, ExpiresAt: now.Add(time.Hour)}
	if err := ok.CheckBind("key_a", now); err != nil {
		t.Fatalf("complete session of the key: %v", err)
	}
	for name, s := range map[string]Session{
		"foreign":         {ID: "ups_x", KeyID: "key_b", State: Complete, ExpiresAt: now.Add(time.Hour)},
		"digest mismatch": {ID: "ups_x", KeyID: "key_a", State: Aborted, Reason: "digest mismatch", ExpiresAt: now.Add(time.Hour)},
		"open":            {ID: "ups_x", KeyID: "key_a", State: Open, ExpiresAt: now.Add(time.Hour)},
		"bound":           {ID: "ups_x", KeyID: "key_a", State: Complete, BoundAt: &now, ExpiresAt: now.Add(time.Hour)},
		"lapsed":          {ID: "ups_x", KeyID: "key_a", State: Complete, ExpiresAt: now},
	} {
		if err := s.CheckBind("key_a", now); !errs.Is(err, errs.UploadUnusable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
