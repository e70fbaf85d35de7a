package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/extract"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// Attachment is bound content as a claim carries it.
type Attachment struct {
	SHA256    string // hex
	MediaType string
	Size      int64
}

// Bind attaches the content of complete upload sessions of keyID to an
// artifact, in the submission's unit of work. An unknown, foreign,
// incomplete, aborted (digest mismatch) or lapsed session is refused.
//
// Locks are taken in one order in every submission, so two never wait on
// each other in a cycle: the named sessions' rows first (in id order,
// for update: a submission naming a session another is binding waits for
// it to commit, then finds the session bound), then their content
// addresses in order. Every refusal comes before the first address lock.
func (s *Service) Bind(ctx context.Context, tenant, keyID, artifact string, sessions []string) ([]Attachment, error) {
	found, err := s.Repo.SessionsForBind(ctx, tenant, sessions)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]domain.Session, len(found))
	for _, ses := range found {
		byID[ses.ID] = ses
	}
	now := s.now()
	bind := make([]domain.Session, 0, len(sessions))
	for _, id := range sessions {
		ses, ok := byID[id]
		if !ok {
			return nil, domain.Unusable("no upload session %s for this key", id)
		}
		if err := ses.CheckBind(keyID, now); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(bind, func(x domain.Session) bool { return x.ExpectedSHA256 == ses.ExpectedSHA256 }) {
			return nil, domain.Unusable("attachments name the same content twice (session %s)", id)
		}
		bind = append(bind, ses)
	}
	if err := s.lockAddresses(ctx, tenant, bind); err != nil {
		return nil, err
	}
	out := make([]Attachment, 0, len(bind))
	for _, ses := range bind {
		if _, err := s.Repo.BlobGet(ctx, tenant, ses.ExpectedSHA256); errors.Is(err, ErrNotFound) {
			return nil, domain.Unusable("the content of upload session %s was erased; upload again", ses.ID)
		} else if err != nil {
			return nil, err
		}
		if ok, err := s.Repo.SessionBind(ctx, tenant, ses.ID, now); err != nil {
			return nil, err
		} else if !ok {
			return nil, domain.Unusable("upload session %s is bound to a claim already; a session binds once, upload again", ses.ID)
		}
		if err := s.Repo.BindingInsert(ctx, Binding{
			TenantID: tenant, ArtifactID: artifact, SHA256: ses.ExpectedSHA256, SessionID: ses.ID, MediaType: ses.MediaType, Size: ses.Size,
		}); err != nil {
			return nil, err
		}
		out = append(out, Attachment{SHA256: hex.EncodeToString(ses.ExpectedSHA256[:]), MediaType: ses.MediaType, Size: ses.Size})
	}
	return out, nil
}

// lockAddresses takes the address locks of the sessions' content, in
// order. An address lock orders a binding with a shred of the same
// content: either the binding keeps it, or the bind sees it gone.
func (s *Service) lockAddresses(ctx context.Context, tenant string, sessions []domain.Session) error {
	addresses := make([]string, 0, len(sessions))
	for _, ses := range sessions {
		addresses = append(addresses, ses.Address)
	}
	slices.Sort(addresses)
	for _, a := range slices.Compact(addresses) {
		if err := s.Repo.LockAddress(ctx, tenant, a); err != nil {
			return err
		}
	}
	return nil
}

// Release unbinds an erased artifact's attachments in its unit of work
// and shreds content no longer needed: its wrapped data key is deleted
// with the blob row (nothing can decrypt the object after commit) and the
// object is queued for deletion from the store.
func (s *Service) Release(ctx context.Context, tenant, actor, artifact string) error {
	shas, err := s.Repo.BindingsDelete(ctx, tenant, artifact)
	if err != nil {
		return err
	}
	for _, sha := range shas {
		if err := s.shredIfUnused(ctx, tenant, actor, sha, "erased with "+artifact); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) shredIfUnused(ctx context.Context, tenant, actor string, sha [32]byte, why string) error {
	blob, err := s.Repo.BlobGet(ctx, tenant, sha)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.Repo.LockAddress(ctx, tenant, blob.Address); err != nil {
		return err
	}
	now := s.now()
	if used, err := s.Repo.BlobInUse(ctx, tenant, sha, now); err != nil || used {
		return err
	}
	if _, err := s.Repo.BlobDelete(ctx, tenant, sha); err != nil {
		return err
	}
	if err := s.Repo.SessionsScrub(ctx, tenant, sha); err != nil {
		return err
	}
	if _, err := s.Repo.DoomedInsert(ctx, Doomed{TenantID: tenant, ObjectKey: blob.ObjectKey}, now); err != nil {
		return err
	}
	return s.record(ctx, tenant, journal.Event{
		Type: "attachment.shred", Actor: actor, Subject: map[string]any{"address": blob.Address},
		Payload: map[string]any{"size_bytes": blob.Size, "reason": why},
	})
}

// Download is an attachment ready to stream.
type Download struct {
	MediaType string
	Size      int64
	SHA256    string
	Reader    *seal.Reader
}

// Open returns an attachment of a claim the caller may read, decrypting as
// it is read (ranges fetch only the segments they need).
func (s *Service) OpenAttachment(ctx context.Context, artifact, shaHex string) (Download, error) {
	c, err := caller(ctx)
	if err != nil {
		return Download{}, err
	}
	notFound := errs.New(errs.NotFound, "attachments are read by those who may read their claim (R3); unknown and unreadable are indistinguishable",
		"no readable attachment %s on artifact %s", shaHex, artifact)
	sha, ok := parseSHA(shaHex)
	if !ok {
		return Download{}, notFound
	}
	if ok, err := s.Claims.CanRead(ctx, artifact); err != nil {
		return Download{}, err
	} else if !ok {
		return Download{}, notFound
	}
	b, err := s.Repo.BindingGet(ctx, c.TenantID, artifact, sha)
	if errors.Is(err, ErrNotFound) {
		return Download{}, notFound
	}
	if err != nil {
		return Download{}, err
	}
	r, err := s.reader(ctx, c.TenantID, sha)
	if err != nil {
		return Download{}, err
	}
	// Fail typed before the response starts, not half-way through it.
	if err := r.Prime(); err != nil {
		return Download{}, err
	}
	return Download{MediaType: b.MediaType, Size: b.Size, SHA256: shaHex, Reader: r}, nil
}

func parseSHA(h string) ([32]byte, bool) {
	var sha [32]byte
	h = strings.TrimPrefix(h, "sha256:")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return sha, false
	}
	copy(sha[:], b)
	return sha, true
}

// reader decrypts a tenant's stored content.
func (s *Service) reader(ctx context.Context, tenant string, sha [32]byte) (*seal.Reader, error) {
	blob, err := s.Repo.BlobGet(ctx, tenant, sha)
	if err != nil {
		return nil, err
	}
	dataKey, err := s.Keys.Unwrap(blob.WrappedKey, tenant, blob.Address)
	if err != nil {
		return nil, fmt.Errorf("unwrap data key of %s: %w", blob.Address, err)
	}
	obj, err := seal.NewObject(dataKey, blob.Address)
	if err != nil {
		return nil, err
	}
	writes := make([]uint64, len(blob.PartWrites))
	for i, w := range blob.PartWrites {
		writes[i] = uint64(w)
	}
	layout := seal.Layout{Size: blob.Size, PartSize: blob.PartSize, Writes: writes}
	key := blob.ObjectKey
	return seal.NewReader(obj, layout, func(off, n int64) ([]byte, error) {
		b, err := s.Store.ReadAt(ctx, key, off, n)
		return b, unavailable(err)
	})
}

// Sweep does one round of housekeeping on any replica: open sessions past
// their expiry become expired (their multipart uploads abandoned), content
// nothing binds or may still bind is shredded, and queued objects are
// deleted from the store. It returns how many things it did.
func (s *Service) Sweep(ctx context.Context, batch int) (int, error) {
	done := 0
	now := s.now()
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		expired, err := s.Repo.ExpireDue(ctx, now, batch)
		if err != nil {
			return err
		}
		for _, ses := range expired {
			if _, err := s.Repo.DoomedInsert(ctx, Doomed{TenantID: ses.TenantID, ObjectKey: ses.ObjectKey, StoreUpload: ses.StoreUpload}, now); err != nil {
				return err
			}
			if err := s.record(ctx, ses.TenantID, journal.Event{
				Type: "attachment.expired", Actor: "system", Subject: map[string]any{"upload_session": ses.ID},
				Payload: map[string]any{"parts_received": ses.PartsReceived, "expired_at": ses.ExpiresAt},
			}); err != nil {
				return err
			}
		}
		done += len(expired)
		unused, err := s.Repo.BlobsUnused(ctx, now, batch)
		if err != nil {
			return err
		}
		for _, b := range unused {
			if err := s.shredIfUnused(ctx, b.TenantID, "system", b.SHA256, "never bound before its sessions expired"); err != nil {
				return err
			}
		}
		done += len(unused)
		return nil
	})
	if err != nil {
		return done, err
	}
	n, err := s.deleteDoomed(ctx, batch)
	return done + n, err
}

// deleteDoomed removes queued objects and abandoned uploads from the
// store. Rows are claimed in a short transaction and the store is called
// outside it; a row is deleted once its object is gone, and a claim that
// is not finished (a sweeper died, the store is down) comes due again.
func (s *Service) deleteDoomed(ctx context.Context, batch int) (int, error) {
	now := s.now()
	doomed, err := s.Repo.DoomedClaim(ctx, now, now.Add(10*time.Minute), batch)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, d := range doomed {
		if d.StoreUpload != "" {
			err = s.Store.Abort(ctx, d.ObjectKey, d.StoreUpload)
		} else {
			err = s.Store.Delete(ctx, d.ObjectKey)
		}
		if err != nil {
			s.Log.Warn("object store clean-up; will retry", "object", d.ObjectKey, "err", err)
			continue
		}
		if err := s.Repo.DoomedDelete(ctx, d.ID); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

// Material is one attachment's review material.
type Material struct {
	Attachment
	Kind      string // text, pdf_text or opaque
	Text      string
	Truncated bool
	Note      string
	// Provenance: the session that uploaded it, the key that opened the
	// session, and when it completed.
	UploadSession string
	UploadedBy    string
	CompletedAt   *time.Time
}

// Review returns what a reviewer reads for each of an artifact's
// attachments: extracted text where a deterministic extractor exists,
// otherwise provenance, digest and size (the caller adds the scan result).
func (s *Service) Review(ctx context.Context, tenant, artifact string) ([]Material, error) {
	bindings, err := s.Repo.BindingsList(ctx, tenant, artifact)
	if err != nil {
		return nil, err
	}
	out := make([]Material, 0, len(bindings))
	for _, b := range bindings {
		m := Material{Attachment: Attachment{SHA256: hex.EncodeToString(b.SHA256[:]), MediaType: b.MediaType, Size: b.Size}, UploadSession: b.SessionID}
		if ses, err := s.Repo.SessionGet(ctx, tenant, b.SessionID); err == nil {
			m.UploadedBy, m.CompletedAt = ses.KeyID, ses.CompletedAt
		}
		x := extract.Material{Kind: extract.KindOpaque, Note: "no deterministic text extractor for " + b.MediaType}
		if extract.Textual(b.MediaType) {
			r, err := s.reader(ctx, tenant, b.SHA256)
			if err != nil {
				return nil, err
			}
			x = extract.From(ctx, b.MediaType, r, b.Size, s.PDF)
		}
		m.Kind, m.Text, m.Truncated, m.Note = x.Kind, x.Text, x.Truncated, x.Note
		out = append(out, m)
	}
	return out, nil
}
