package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/extract"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/ids"
	"github.com/omlhub/oml/platform/journal"
)

// Config bounds uploads.
type Config struct {
	// MaxSize is the largest attachment a tenant may upload.
	MaxSize int64
	// MaxOpen is how many open sessions one key may hold.
	MaxOpen int
	// TTL is how long a session takes parts (and, once complete, may be
	// bound) after it opens.
	TTL time.Duration
	// LeaseTTL bounds how long a crashed writer blocks a session.
	LeaseTTL time.Duration
}

// Deps are the service's ports.
type Deps struct {
	Repo    Repository
	Store   Store
	Access  Access
	Claims  Claims
	Journal Journal
	Tx      Transactor
	Keys    *seal.Keys
	Log     *slog.Logger
	Now     func() time.Time
	Config  Config
	// PDF parses PDFs for review material out of the server's process
	// (nil: in process, for tests).
	PDF extract.Sandbox
}

// Service is the attachments context's application service.
type Service struct{ Deps }

// New returns a service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	c := &d.Config
	if c.MaxSize <= 0 {
		c.MaxSize = 5 << 30
	}
	if c.MaxOpen <= 0 {
		c.MaxOpen = 16
	}
	if c.TTL <= 0 {
		c.TTL = domain.DefaultTTL
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 5 * time.Minute
	}
	return &Service{Deps: d}
}

func (s *Service) now() time.Time { return s.Now().UTC() }

// caller returns the authenticated content caller.
func caller(ctx context.Context) (auth.Caller, error) { return auth.ContentCaller(ctx, "attachments") }

func sessionNotFound() error {
	return errs.New(errs.NotFound, "upload sessions belong to the key that opened them; unknown and foreign are indistinguishable",
		"no upload session with that id for this key")
}

// unavailable is the typed, retryable refusal when the store cannot be
// reached; nothing was recorded, so the same request can be sent again.
func unavailable(err error) error {
	if errors.Is(err, blobstore.ErrUnavailable) {
		return errs.Retry(errs.Unavailable, "the object store is unreachable; the session is unchanged and resumable", 5*time.Second,
			"object store unavailable; send the same request again")
	}
	return err
}

// Open starts an upload session.
func (s *Service) Open(ctx context.Context, req domain.OpenRequest) (domain.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return domain.Session{}, err
	}
	if ok, err := s.Access.Writes(ctx); err != nil {
		return domain.Session{}, err
	} else if !ok {
		return domain.Session{}, errs.New(errs.Denied, "attachments are opened by keys with writer effective access (D7)",
			"this key holds writer on no workarea")
	}
	limits, err := s.limits(ctx, c.TenantID)
	if err != nil {
		return domain.Session{}, err
	}
	digest, err := req.Validate(limits.MaxUploadBytes)
	if err != nil {
		return domain.Session{}, err
	}
	now := s.now()
	if n, err := s.Repo.OpenCount(ctx, c.TenantID, c.KeyID, now); err != nil {
		return domain.Session{}, err
	} else if n >= s.Config.MaxOpen {
		return domain.Session{}, errs.Retry(errs.LimitQuota, "open upload sessions per key are bounded", time.Minute,
			"this key has %d open upload sessions (the most allowed); complete, abort or let one expire", n)
	}
	ses := domain.Session{
		ID: ids.New(ids.Upload), TenantID: c.TenantID, KeyID: c.KeyID, State: domain.Open,
		MediaType: req.MediaType, Size: req.Size, ExpectedSHA256: digest, PartSize: req.PartSize,
		Address: s.Keys.Address(c.TenantID, digest), CreatedAt: now, ExpiresAt: now.Add(s.Config.TTL),
	}
	// Every session uploads to its own object, whether or not the tenant
	// holds the content already: answering differently would tell any
	// writer what the tenant stores. Equal content is folded into one
	// object when a session completes.
	dataKey, err := seal.NewDataKey()
	if err != nil {
		return domain.Session{}, err
	}
	if ses.WrappedKey, err = s.Keys.Wrap(dataKey, c.TenantID, ses.Address); err != nil {
		return domain.Session{}, err
	}
	ses.ObjectKey = objectKey(c.TenantID, ses.Address, ses.ID)
	if ses.StoreUpload, err = s.Store.Begin(ctx, ses.ObjectKey); err != nil {
		return domain.Session{}, unavailable(err)
	}
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.Repo.SessionInsert(ctx, ses); err != nil {
			return err
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "attachment.open", Actor: c.KeyID, Subject: map[string]any{"upload_session": ses.ID},
			Payload: map[string]any{"media_type": ses.MediaType, "size_bytes": ses.Size, "parts": ses.PartsExpected()},
		})
	})
	if err != nil {
		s.abortUpload(ses.ObjectKey, ses.StoreUpload)
	}
	return ses, err
}

// Limits is a tenant's attachment size ceiling: its own when its admin
// set one, else the deployment's, never above the deployment's.
type Limits struct {
	MaxUploadBytes int64
	Deployment     int64
	TenantSet      bool
}

func (s *Service) limits(ctx context.Context, tenant string) (Limits, error) {
	l := Limits{MaxUploadBytes: s.Config.MaxSize, Deployment: s.Config.MaxSize}
	n, ok, err := s.Repo.TenantLimit(ctx, tenant)
	if err != nil {
		return l, fmt.Errorf("tenant size ceiling: %w", err)
	}
	if ok {
		l.MaxUploadBytes, l.TenantSet = min(n, s.Config.MaxSize), true
	}
	return l, nil
}

// Limits returns the caller's tenant's size ceiling.
func (s *Service) Limits(ctx context.Context) (Limits, error) {
	c, err := caller(ctx)
	if err != nil {
		return Limits{}, err
	}
	return s.limits(ctx, c.TenantID)
}

// SetLimit sets the tenant's size ceiling (tenant admins only), at most
// the deployment's; 0 clears it. The change is journalled.
func (s *Service) SetLimit(ctx context.Context, maxBytes int64) (Limits, error) {
	c, err := caller(ctx)
	if err != nil {
		return Limits{}, err
	}
	if err := s.Access.AdministersTenant(ctx); err != nil {
		return Limits{}, err
	}
	if maxBytes < 0 || maxBytes > s.Config.MaxSize {
		return Limits{}, errs.Invalid("max_upload_bytes must be 1–%d (the deployment's ceiling), or 0 to clear it; got %d", s.Config.MaxSize, maxBytes)
	}
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.Repo.SetTenantLimit(ctx, c.TenantID, maxBytes); err != nil {
			return err
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "attachment.limits", Actor: c.KeyID, Subject: map[string]any{"tenant": c.TenantID},
			Payload: map[string]any{"max_upload_bytes": maxBytes},
		})
	})
	if err != nil {
		return Limits{}, err
	}
	return s.limits(ctx, c.TenantID)
}

// objectKey is where a tenant's content lives in the store: under its
// keyed address (never its name or digest), one object per stored copy, so
// deleting a shredded copy can never touch one stored again later.
func objectKey(tenant, address, session string) string {
	return "blobs/" + tenant + "/" + address + "/" + session
}

// Status returns the caller's session.
func (s *Service) Status(ctx context.Context, id string) (domain.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return domain.Session{}, err
	}
	return s.own(ctx, c, id)
}

// own loads a session of the caller's key; anything else is not found.
func (s *Service) own(ctx context.Context, c auth.Caller, id string) (domain.Session, error) {
	if !ids.Has(ids.Upload, id) {
		return domain.Session{}, sessionNotFound()
	}
	ses, err := s.Repo.SessionGet(ctx, c.TenantID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && ses.KeyID != c.KeyID) {
		return domain.Session{}, sessionNotFound()
	}
	if err == nil && ses.State == domain.Open && ses.Lapsed(s.now()) {
		ses.State, ses.Reason = domain.Expired, "expired before its last part" // the sweeper will record it
	}
	return ses, err
}

// complete records the last part and the session's completion. Content is
// stored once per tenant, whoever completes it first. The store's
// assembly of the object runs outside any transaction, bracketed so that
// nothing is lost if this writer fails half-way: the object is first
// queued for deletion (after a grace period), and the row is removed in
// the transaction that records the blob.
func (s *Service) complete(ctx context.Context, c auth.Caller, ses domain.Session, token string) (domain.Session, error) {
	exists, err := s.blobExists(ctx, c.TenantID, ses.ExpectedSHA256)
	if err != nil {
		return domain.Session{}, err
	}
	var intent int64
	if !exists {
		now := s.now()
		if intent, err = s.Repo.DoomedInsert(ctx, Doomed{TenantID: c.TenantID, ObjectKey: ses.ObjectKey, NotBefore: now.Add(completionGrace)}, now); err != nil {
			return domain.Session{}, err
		}
		if err := s.Store.Complete(ctx, ses.ObjectKey, ses.StoreUpload, ses.PartETags); err != nil {
			if !errors.Is(err, blobstore.ErrNotFound) {
				return domain.Session{}, unavailable(err)
			}
			// An earlier attempt may have assembled it already.
			if _, serr := s.Store.Size(ctx, ses.ObjectKey); serr != nil {
				_, _ = s.close(context.WithoutCancel(ctx), c, ses, domain.Aborted, "the object store lost the multipart upload")
				return domain.Session{}, errs.New(errs.UploadClosed, "only an open session takes parts (D3)",
					"the object store no longer holds session %s's upload; open a new session", ses.ID)
			}
		}
	}
	var redundant bool
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		redundant = false
		if err := s.Repo.LockAddress(ctx, c.TenantID, ses.Address); err != nil {
			return err
		}
		now := s.now()
		switch _, err := s.Repo.BlobGet(ctx, c.TenantID, ses.ExpectedSHA256); {
		case err == nil:
			// The tenant holds this content already (stored before, or by
			// a session that completed first): this copy goes.
			redundant = true
			d := Doomed{TenantID: c.TenantID, ObjectKey: ses.ObjectKey}
			if exists {
				d.StoreUpload = ses.StoreUpload // never assembled: abandon the upload
			}
			if _, err := s.Repo.DoomedInsert(ctx, d, now); err != nil {
				return err
			}
		case errors.Is(err, ErrNotFound) && exists:
			// The content was shredded since the check above: store it.
			return errRetryComplete
		case errors.Is(err, ErrNotFound):
			// The key as stored now, not as leased: a master-key rewrap
			// may have moved it since (oml-server rewrap).
			wrapped, err := s.Repo.SessionKeyForUpdate(ctx, c.TenantID, ses.ID, token)
			if err != nil {
				return err
			}
			if err := s.Repo.BlobInsert(ctx, Blob{
				TenantID: c.TenantID, SHA256: ses.ExpectedSHA256, Address: ses.Address, ObjectKey: ses.ObjectKey,
				Size: ses.Size, PartSize: ses.PartSize, PartWrites: append([]int64(nil), ses.PartWrites...), WrappedKey: wrapped, CreatedAt: now,
			}); err != nil {
				return err
			}
		default:
			return err
		}
		if intent != 0 && !redundant {
			if err := s.Repo.DoomedDelete(ctx, intent); err != nil {
				return err
			}
		}
		ses.State, ses.CompletedAt = domain.Complete, &now
		if err := s.Repo.Progress(ctx, ses, token); err != nil {
			return err
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "attachment.complete", Actor: c.KeyID, Subject: map[string]any{"upload_session": ses.ID},
			Payload: map[string]any{"sha256": hex.EncodeToString(ses.ExpectedSHA256[:]), "size_bytes": ses.Size, "deduplicated": redundant},
		})
	})
	switch {
	case errors.Is(err, errRetryComplete):
		return s.complete(ctx, c, ses, token)
	case errors.Is(err, ErrLeaseLost):
		return domain.Session{}, errs.Retry(errs.UploadBusy, "one writer per upload session at a time (any replica)", time.Second,
			"the write of the last part outlived its lease; ask for the session's status")
	case err != nil:
		return domain.Session{}, err
	}
	if redundant && exists {
		s.abortUpload(ses.ObjectKey, ses.StoreUpload)
	}
	ses.WrappedKey, ses.HashState = nil, nil
	return ses, nil
}

// errRetryComplete restarts a completion whose content was shredded while
// it ran.
var errRetryComplete = errors.New("content shredded during completion")

func (s *Service) blobExists(ctx context.Context, tenant string, sha [32]byte) (bool, error) {
	_, err := s.Repo.BlobGet(ctx, tenant, sha)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Abort ends the caller's open session; aborting an aborted or expired
// one again is a no-op, a complete one is refused.
func (s *Service) Abort(ctx context.Context, id string) (domain.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return domain.Session{}, err
	}
	ses, err := s.own(ctx, c, id)
	if err != nil {
		return domain.Session{}, err
	}
	switch ses.State {
	case domain.Complete:
		return domain.Session{}, errs.New(errs.UploadClosed, "a complete session is not aborted; unbound content expires with it",
			"session %s is complete", ses.ID)
	case domain.Aborted:
		return ses, nil
	}
	state, reason := domain.Aborted, "aborted by its owner"
	if ses.State == domain.Expired {
		state, reason = domain.Expired, ses.Reason
	}
	return s.close(ctx, c, ses, state, reason)
}

func (s *Service) record(ctx context.Context, tenant string, e journal.Event) error {
	_, err := s.Journal.Append(ctx, tenant, e)
	return err
}

// newToken returns a random lease token.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
