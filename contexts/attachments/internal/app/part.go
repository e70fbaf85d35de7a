package app

// The part PUT: one part of an upload session, read once, hashed as it
// streams, sealed and written to the blob store under the session's write
// lease.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/omlhub/oml/contexts/attachments/internal/blobstore"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

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
		// This goroutine is outside every handler's recover: a panic here
		// fails the part (an internal error, logged with its stack) instead
		// of the process.
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("panic sealing part %d of %s: %v\n%s", n, ses.ID, p, debug.Stack())
				pw.CloseWithError(err)
				produced <- err
			}
		}()
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
