package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/omlhub/oml/contexts/attachments/internal/seal"
	"github.com/omlhub/oml/platform/journal"
)

// KeyCounts counts stored data keys by where they are kept.
type KeyCounts struct {
	Blobs    int `json:"blobs"`
	Sessions int `json:"sessions"`
}

func (c KeyCounts) total() int { return c.Blobs + c.Sessions }

// RewrapReport is what a rewrap did: how many data keys it moved to the
// current master key, and how the stored keys stand after its last check.
type RewrapReport struct {
	Rewrapped KeyCounts `json:"rewrapped"`
	Current   KeyCounts `json:"current"`
	// Remaining are still under a previous master key; Unreadable open
	// under no key this process holds (a previous key file is missing).
	Remaining  KeyCounts `json:"remaining"`
	Unreadable KeyCounts `json:"unreadable"`
	Rounds     int       `json:"rounds"`
}

// Done reports whether every stored data key is under the current master
// key, so the previous ones may be retired.
func (r RewrapReport) Done() bool { return r.Remaining.total() == 0 && r.Unreadable.total() == 0 }

// rewrapRounds bounds how often a rewrap goes round again for keys
// written under a previous master meanwhile (a replica not yet rolled, an
// upload completing during the pass).
const rewrapRounds = 3

// Rewrap moves every stored data key that a previous master key wraps to
// the current one, batch keys per transaction, and checks afterwards;
// with check it only checks. Each transaction journals, per tenant, how
// many keys it moved (attachment.rewrap). A key is replaced only if it is
// still the one read, so a shred, a close or another rewrap in between
// wins. Unwrapping is local CPU work, done before the transaction.
func (s *Service) Rewrap(ctx context.Context, batch int, check bool) (RewrapReport, error) {
	if batch < 1 || batch > 10_000 {
		return RewrapReport{}, fmt.Errorf("rewrap: batch must be 1..10000, got %d", batch)
	}
	if err := s.CheckAddressKey(ctx); err != nil {
		return RewrapReport{}, err
	}
	var rep RewrapReport
	for rep.Rounds < rewrapRounds {
		rep.Rounds++
		if !check {
			moved, err := s.rewrapPass(ctx, batch, false)
			if err != nil {
				return rep, err
			}
			rep.Rewrapped.Blobs += moved.Rewrapped.Blobs
			rep.Rewrapped.Sessions += moved.Rewrapped.Sessions
		}
		st, err := s.rewrapPass(ctx, batch, true)
		if err != nil {
			return rep, err
		}
		rep.Current, rep.Remaining, rep.Unreadable = st.Current, st.Remaining, st.Unreadable
		if check || rep.Remaining.total() == 0 {
			break
		}
	}
	return rep, nil
}

// ErrAddressKey: the configured address key is not the one the stored
// content was addressed with.
var ErrAddressKey = errors.New("the content-address key is not the one this database's attachments were addressed with: " +
	"after a master-key rotation keep OML_ADDRESS_KEY_FILE (docs/OPERATIONS.md, Rotating keys)")

// CheckAddressKey compares one stored address with the address the
// configured key makes for it, so that a master key replaced without its
// address key (equal content would land on a second address, and the
// address locks that order completion against shredding would no longer
// meet) is refused at start.
func (s *Service) CheckAddressKey(ctx context.Context) error {
	tenant, sha, address, ok, err := s.Repo.AddressSample(ctx)
	if err != nil || !ok {
		return err
	}
	if s.Keys.Address(tenant, sha) != address {
		return ErrAddressKey
	}
	return nil
}

// rewrapPass reads every stored data key once, rewrapping (unless check)
// those under a previous master key.
func (s *Service) rewrapPass(ctx context.Context, batch int, check bool) (RewrapReport, error) {
	var rep RewrapReport
	kinds := []struct {
		list  func(context.Context, WrappedKey, int) ([]WrappedKey, error)
		count func(*KeyCounts) *int
		name  string
	}{
		{s.Repo.SessionKeysAfter, func(c *KeyCounts) *int { return &c.Sessions }, "sessions"},
		{s.Repo.BlobKeysAfter, func(c *KeyCounts) *int { return &c.Blobs }, "blobs"},
	}
	for _, kind := range kinds {
		var after WrappedKey
		for {
			page, err := kind.list(ctx, after, batch)
			if err != nil {
				return rep, err
			}
			if len(page) == 0 {
				break
			}
			after = page[len(page)-1]
			type change struct {
				key  WrappedKey
				next []byte
			}
			var changes []change
			for _, k := range page {
				next, err := s.Keys.Rewrap(k.Wrapped, k.TenantID, k.Address)
				switch {
				case errors.Is(err, seal.ErrOpen):
					*kind.count(&rep.Unreadable)++
				case err != nil:
					return rep, err
				case next == nil:
					*kind.count(&rep.Current)++
				case check:
					*kind.count(&rep.Remaining)++
				default:
					changes = append(changes, change{k, next})
				}
			}
			if len(changes) > 0 {
				moved := map[string]int{}
				err := s.Tx.InTx(ctx, func(ctx context.Context) error {
					clear(moved)
					for _, c := range changes {
						ok, err := s.Repo.RewrapKey(ctx, c.key, c.next)
						if err != nil {
							return err
						}
						if ok {
							moved[c.key.TenantID]++
						}
					}
					for _, t := range slices.Sorted(maps.Keys(moved)) {
						if err := s.record(ctx, t, journal.Event{
							Type: "attachment.rewrap", Actor: "system", Subject: map[string]any{"tenant": t},
							Payload: map[string]any{kind.name: moved[t]},
						}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return rep, err
				}
				for _, n := range moved {
					*kind.count(&rep.Rewrapped) += n
				}
			}
			if len(page) < batch {
				break
			}
		}
	}
	return rep, nil
}
