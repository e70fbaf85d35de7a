package app

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
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
func caller(ctx context.Context) (auth.Caller, error) {
	c, ok := auth.From(ctx)
	if !ok {
		return c, errs.New(errs.AuthMissing, "every call presents a bearer key", "no authenticated caller")
	}
	if c.Role == "operator" {
		return c, errs.New(errs.VerbCeiling, "operator never writes, reads or reviews content (D9)", "operator keys have no attachments")
	}
	return c, nil
}

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

// Part is one PUT of a part.
type Part struct {
	Session string
	N       int
	Body    io.Reader
	// Length is the declared Content-Length (-1 when unknown).
	Length int64
	// ContentMD5 and ContentDigest are the optional integrity headers.
	ContentMD5    string
	ContentDigest string
}

// PutPart takes part n of a session: the next one is stored; one already
// received is an idempotent success if its bytes are identical and a
// conflict otherwise; anything else is refused without changing the
// session. On the last part the plaintext digest decides: complete, or
// aborted with upload.digest_mismatch.
func (s *Service) PutPart(ctx context.Context, p Part) (domain.Session, error) {
	c, err := caller(ctx)
	if err != nil {
		return domain.Session{}, err
	}
	ses, err := s.own(ctx, c, p.Session)
	if err != nil {
		return domain.Session{}, err
	}
	now := s.now()
	decision, err := ses.CheckPart(p.N, lengthOr(p.Length, ses.PartLength(p.N)), now)
	if err != nil {
		return domain.Session{}, err
	}
	if decision == domain.Repeat {
		return s.repeat(ses, p)
	}
	token := newToken()
	leased, ok, err := s.Repo.Lease(ctx, c.TenantID, ses.ID, token, now.Add(s.Config.LeaseTTL), now)
	if err != nil {
		return domain.Session{}, err
	}
	if !ok {
		fresh, err := s.own(ctx, c, ses.ID)
		if err != nil {
			return domain.Session{}, err
		}
		if d, err := fresh.CheckPart(p.N, lengthOr(p.Length, fresh.PartLength(p.N)), now); err != nil {
			return domain.Session{}, err
		} else if d == domain.Repeat {
			return s.repeat(fresh, p)
		}
		return domain.Session{}, errs.Retry(errs.UploadBusy, "one writer per upload session at a time (any replica)", time.Second,
			"part %d of session %s is being written by another request; retry shortly", p.N, ses.ID)
	}
	// Every way out that records no part gives the lease back, a panic
	// included: a request that writes nothing must never keep the next
	// part out.
	held := true
	giveBack := func() {
		if held {
			held = false
			s.release(ctx, c, ses.ID, token)
		}
	}
	defer giveBack()
	if d, err := leased.CheckPart(p.N, lengthOr(p.Length, leased.PartLength(p.N)), now); err != nil || d == domain.Repeat {
		// A racing duplicate stored this part between the check above and
		// the lease, or the session ended: nothing to write, so the lease
		// goes back before the body is read.
		giveBack()
		if err != nil {
			return domain.Session{}, err
		}
		return s.repeat(leased, p)
	}
	// The write may not outlive its lease: past it another writer may take
	// the session over.
	wctx, cancel := context.WithDeadline(ctx, now.Add(s.Config.LeaseTTL-leaseMargin))
	defer cancel()
	out, err := s.store(wctx, c, leased, token, p)
	if err == nil {
		held = false // recording the part released it
	}
	return out, err
}

// release gives a session's write lease back, if this request still holds
// it; recording a part releases it too.
func (s *Service) release(ctx context.Context, c auth.Caller, id, token string) {
	if err := s.Repo.Release(context.WithoutCancel(ctx), c.TenantID, id, token); err != nil {
		s.Log.WarnContext(ctx, "release upload lease", "session", id, "err", err)
	}
}

// leaseMargin is kept between a write's deadline and its lease's end.
const leaseMargin = 15 * time.Second

func lengthOr(declared, expected int64) int64 {
	if declared < 0 {
		return expected
	}
	return declared
}

// partReader consumes one part's body as it streams: it enforces the
// part's exact length, feeds the running digest and the part's own, checks
// the optional integrity headers at the end, and (when sealing) emits the
// part's sealed segments. Any refusal is returned by finish; a sealed
// stream whose part is refused ends with that error, so the store never
// completes the write.
type partReader struct {
	p       Part
	want    int64
	running hash.Hash
	part    hash.Hash
	md5     hash.Hash
	read    int64
}

func newPartReader(p Part, want int64, running hash.Hash) *partReader {
	r := &partReader{p: p, want: want, running: running, part: sha256.New()}
	if p.ContentMD5 != "" {
		r.md5 = md5.New()
	}
	return r
}

// next reads the next segment of the part into buf (nil at the end).
func (r *partReader) next(buf []byte) ([]byte, error) {
	if r.read >= r.want {
		return nil, nil
	}
	n := min(int64(len(buf)), r.want-r.read)
	got, err := io.ReadFull(r.p.Body, buf[:n])
	r.read += int64(got)
	chunk := buf[:got]
	if r.running != nil {
		r.running.Write(chunk)
	}
	r.part.Write(chunk)
	if r.md5 != nil {
		r.md5.Write(chunk)
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, errs.New(errs.UploadPartSize, "every part but the last is part_size_bytes long; the last holds the rest",
				"part %d must be %d bytes, got %d", r.p.N, r.want, r.read)
		}
		return nil, errs.Invalid("could not read part %d: %v", r.p.N, err)
	}
	return chunk, nil
}

// finish checks there is nothing after the part and that the integrity
// headers match.
func (r *partReader) finish() error {
	var extra [1]byte
	if n, _ := io.ReadFull(r.p.Body, extra[:]); n > 0 {
		return errs.New(errs.LimitSize, "every part but the last is part_size_bytes long; the last holds the rest",
			"part %d must be %d bytes, got more", r.p.N, r.want)
	}
	if r.md5 != nil && r.p.ContentMD5 != base64.StdEncoding.EncodeToString(r.md5.Sum(nil)) {
		return partIntegrity(r.p.N, "Content-MD5")
	}
	if r.p.ContentDigest != "" {
		want, ok := sha256Digest(r.p.ContentDigest)
		if !ok {
			return errs.Invalid("Content-Digest must carry sha-256=:<base64>:, got %q", r.p.ContentDigest)
		}
		if !bytes.Equal(r.part.Sum(nil), want) {
			return partIntegrity(r.p.N, "Content-Digest")
		}
	}
	return nil
}

// drain consumes the whole part without storing it.
func (r *partReader) drain() error {
	buf := make([]byte, seal.SegmentSize)
	for {
		chunk, err := r.next(buf)
		if err != nil {
			return err
		}
		if chunk == nil {
			return r.finish()
		}
	}
}

func partIntegrity(n int, header string) error {
	return errs.New(errs.UploadPartCheck, "a part sent with an integrity header must match it; nothing was recorded",
		"part %d does not match its %s header; send it again", n, header)
}

// sha256Digest reads the sha-256 member of an RFC 9530 Content-Digest.
func sha256Digest(h string) ([]byte, bool) {
	for _, member := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(member), "=")
		if !ok || !strings.EqualFold(k, "sha-256") {
			continue
		}
		v = strings.Trim(v, ":")
		b, err := base64.StdEncoding.DecodeString(v)
		return b, err == nil && len(b) == sha256.Size
	}
	return nil, false
}

// repeat answers a part that was already received: the same bytes are an
// idempotent success, other bytes a conflict.
func (s *Service) repeat(ses domain.Session, p Part) (domain.Session, error) {
	r := newPartReader(p, ses.PartLength(p.N), nil)
	if err := r.drain(); err != nil {
		return domain.Session{}, err
	}
	if !bytes.Equal(r.part.Sum(nil), ses.PartSHA256[p.N-1]) {
		return domain.Session{}, errs.New(errs.UploadPartDiffer, "a part is stored once; resending it must send the same bytes",
			"part %d of session %s was received with other bytes", p.N, ses.ID)
	}
	return ses, nil
}

// store writes part p, the session's next (checked under the lease), under
// the lease. The body streams through: each 64 KiB segment is hashed,
// sealed and handed to the store while the client is still sending the
// rest, so receiving and storing overlap and no part is ever held in
// memory whole. It returns with the part recorded (which releases the
// lease) or an error.
func (s *Service) store(ctx context.Context, c auth.Caller, ses domain.Session, token string, p Part) (domain.Session, error) {
	running := sha256.New()
	if len(ses.HashState) > 0 {
		if err := running.(encoding.BinaryUnmarshaler).UnmarshalBinary(ses.HashState); err != nil {
			return domain.Session{}, fmt.Errorf("restore running digest of %s: %w", ses.ID, err)
		}
	}
	length := ses.PartLength(p.N)
	last := p.N == ses.PartsExpected()
	r := newPartReader(p, length, running)
	// check runs when the part has been read: a refusal, or a digest that
	// does not match on the last part.
	var mismatch []byte
	check := func() error {
		if err := r.finish(); err != nil {
			return err
		}
		if last {
			if got := running.Sum(nil); !bytes.Equal(got, ses.ExpectedSHA256[:]) {
				mismatch = got
				return errDigestMismatch
			}
		}
		return nil
	}
	write, err := seal.NewWriteID()
	if err != nil {
		return domain.Session{}, err
	}
	etag, err := s.putSealed(ctx, c, ses, p.N, write, last, length, r, check)
	if err != nil && !errors.Is(err, errDigestMismatch) {
		return domain.Session{}, err
	}
	if mismatch != nil {
		return domain.Session{}, s.mismatch(ctx, c, ses, mismatch)
	}
	state, err := marshal(running)
	if err != nil {
		return domain.Session{}, err
	}
	ses.PartsReceived, ses.BytesReceived, ses.HashState = p.N, ses.BytesReceived+length, state
	ses.PartSHA256 = append(ses.PartSHA256, r.part.Sum(nil))
	ses.PartETags = append(ses.PartETags, etag)
	ses.PartWrites = append(ses.PartWrites, int64(write))
	if !last {
		if err := s.Repo.Progress(ctx, ses, token); errors.Is(err, ErrLeaseLost) {
			return domain.Session{}, errs.Retry(errs.UploadBusy, "one writer per upload session at a time (any replica)", time.Second,
				"the write of part %d took longer than its lease; send it again", p.N)
		} else if err != nil {
			return domain.Session{}, err
		}
		return ses, nil
	}
	return s.complete(ctx, c, ses, token)
}

// errDigestMismatch stops a last part whose bytes do not hash to the
// expected digest before the store keeps it.
var errDigestMismatch = errors.New("digest mismatch")

func marshal(h hash.Hash) ([]byte, error) {
	return h.(encoding.BinaryMarshaler).MarshalBinary()
}

// putSealed seals a part segment by segment under the session's data key
// and this write's attempt, streaming it to the store. check runs after
// the last plaintext byte; if it fails, the stream fails and the store
// keeps nothing.
func (s *Service) putSealed(ctx context.Context, c auth.Caller, ses domain.Session, n int, write uint64, last bool, length int64, r *partReader, check func() error) (string, error) {
	dataKey, err := s.Keys.Unwrap(ses.WrappedKey, c.TenantID, ses.Address)
	if err != nil {
		return "", fmt.Errorf("unwrap data key of %s: %w", ses.ID, err)
	}
	obj, err := seal.NewObject(dataKey, ses.Address)
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	produced := make(chan error, 1)
	go func() {
		plain := make([]byte, seal.SegmentSize)
		sealed := make([]byte, 0, seal.SegmentSize+seal.Overhead)
		segs := seal.Segments(length)
		for i := int64(0); i < segs; i++ {
			chunk, err := r.next(plain) // nil only for the one empty segment of an empty part
			if err != nil {
				pw.CloseWithError(err)
				produced <- err
				return
			}
			sealed = obj.SealSegment(sealed[:0], uint32(n), write, uint32(i), last && i == segs-1, chunk)
			if _, err := pw.Write(sealed); err != nil {
				produced <- nil // the store stopped reading; its error is the answer
				return
			}
		}
		err := check()
		pw.CloseWithError(err) // nil: a clean end of the stream
		produced <- err
	}()
	etag, err := s.Store.PutPart(ctx, ses.ObjectKey, ses.StoreUpload, n, pr, seal.SealedLen(length))
	pr.CloseWithError(errors.New("store finished reading"))
	if perr := <-produced; perr != nil {
		return "", perr // the client's bytes were refused: that is the answer
	}
	if errors.Is(err, blobstore.ErrNotFound) {
		// The store no longer knows the upload (it was completed or
		// aborted behind our back): this session cannot finish.
		_, _ = s.close(context.WithoutCancel(ctx), c, ses, domain.Aborted, "the object store lost the multipart upload")
		return "", errs.New(errs.UploadClosed, "only an open session takes parts (D3)",
			"the object store no longer holds session %s's upload; open a new session", ses.ID)
	}
	return etag, unavailable(err)
}

// mismatch ends a session whose bytes do not hash to the expected digest.
func (s *Service) mismatch(ctx context.Context, c auth.Caller, ses domain.Session, got []byte) error {
	if _, err := s.close(ctx, c, ses, domain.Aborted, "digest mismatch"); err != nil {
		return err
	}
	return errs.New(errs.DigestMismatch, "a session records its expected digest; bytes that do not match never bind (D3)",
		"session %s received bytes with sha256 %s, expected %s; session is terminal, open a new one",
		ses.ID, hex.EncodeToString(got), hex.EncodeToString(ses.ExpectedSHA256[:]))
}

// close moves an open session to a terminal state, journals it and
// abandons its multipart upload.
func (s *Service) close(ctx context.Context, c auth.Caller, ses domain.Session, state domain.State, reason string) (domain.Session, error) {
	var out domain.Session
	var closed bool
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		if out, closed, err = s.Repo.Close(ctx, c.TenantID, ses.ID, state, reason); err != nil || !closed {
			return err
		}
		if _, err := s.Repo.DoomedInsert(ctx, Doomed{TenantID: c.TenantID, ObjectKey: out.ObjectKey, StoreUpload: out.StoreUpload}, s.now()); err != nil {
			return err
		}
		return s.record(ctx, c.TenantID, journal.Event{
			Type: "attachment." + string(state), Actor: c.KeyID, Subject: map[string]any{"upload_session": ses.ID},
			Payload: map[string]any{"reason": reason, "parts_received": out.PartsReceived},
		})
	})
	if err != nil {
		return domain.Session{}, err
	}
	if !closed {
		return s.Repo.SessionGet(ctx, c.TenantID, ses.ID)
	}
	s.abortUpload(out.ObjectKey, out.StoreUpload)
	return out, nil
}

// abortUpload abandons a multipart upload now, best effort; the sweeper
// retries from the doomed queue.
func (s *Service) abortUpload(key, upload string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Store.Abort(ctx, key, upload); err != nil {
		s.Log.Warn("abort multipart upload", "object", key, "err", err)
	}
}

// completionGrace is how long a completion may take between assembling
// its object and recording it; until then the object's doomed row waits.
const completionGrace = 30 * time.Minute

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
			if err := s.Repo.BlobInsert(ctx, Blob{
				TenantID: c.TenantID, SHA256: ses.ExpectedSHA256, Address: ses.Address, ObjectKey: ses.ObjectKey,
				Size: ses.Size, PartSize: ses.PartSize, PartWrites: append([]int64(nil), ses.PartWrites...), WrappedKey: ses.WrappedKey, CreatedAt: now,
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
