package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/contexts/attachments/internal/seal"
)

// Rewrap moves keys under a previous master to the current one across
// batch boundaries, leaves current ones alone, counts the ones no key
// opens, journals per tenant per transaction, and with check changes
// nothing.
func TestRewrap(t *testing.T) {
	oldMaster, newMaster := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(oldMaster)
	_, _ = rand.Read(newMaster)
	addr, _ := seal.AddressKey(oldMaster)
	before, _ := seal.NewKeys(seal.Secrets{Master: oldMaster})
	during, _ := seal.NewKeys(seal.Secrets{Master: newMaster, Previous: [][]byte{oldMaster}, Address: addr})
	after, _ := seal.NewKeys(seal.Secrets{Master: newMaster, Address: addr})
	stranger, _ := seal.NewKeys(seal.Secrets{Master: make([]byte, 32)})
	after2, _ := seal.NewKeys(seal.Secrets{Master: newMaster}) // the address key not kept

	repo, j := newFakeRepo(), &fakeJournal{}
	put := func(k *seal.Keys, tenant string, i int) {
		sha := sha256.Sum256(fmt.Appendf(nil, "%s-%d", tenant, i))
		dk, _ := seal.NewDataKey()
		w, _ := k.Wrap(dk, tenant, k.Address(tenant, sha))
		repo.blobs[tenant+string(sha[:])] = app.Blob{TenantID: tenant, SHA256: sha, Address: k.Address(tenant, sha), WrappedKey: w}
	}
	for i := range 5 {
		put(before, "tn_a", i)
		put(before, "tn_b", i)
	}
	put(after, "tn_a", 99)
	put(stranger, "tn_b", 99)
	dk, _ := seal.NewDataKey()
	openSHA, doneSHA := sha256.Sum256([]byte("open")), sha256.Sum256([]byte("done"))
	openAddr := before.Address("tn_a", openSHA)
	w, _ := before.Wrap(dk, "tn_a", openAddr)
	repo.sessions["up_1"] = domain.Session{ID: "up_1", TenantID: "tn_a", State: domain.Open, ExpectedSHA256: openSHA, Address: openAddr, WrappedKey: w}
	repo.sessions["up_2"] = domain.Session{ID: "up_2", TenantID: "tn_a", State: domain.Complete, ExpectedSHA256: doneSHA, Address: before.Address("tn_a", doneSHA)}

	svc := app.New(app.Deps{Repo: repo, Journal: j, Tx: inline{}, Keys: during})
	ctx := context.Background()
	// Another address key than the data's is refused before anything moves.
	if _, err := app.New(app.Deps{Repo: repo, Journal: j, Tx: inline{}, Keys: after2}).Rewrap(ctx, 10, false); !errors.Is(err, app.ErrAddressKey) {
		t.Fatalf("rewrap under another address key: %v", err)
	}
	if _, err := svc.Rewrap(ctx, 0, false); err == nil {
		t.Fatal("batch 0 accepted")
	}
	rep, err := svc.Rewrap(ctx, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Remaining != (app.KeyCounts{Blobs: 10, Sessions: 1}) || rep.Rewrapped != (app.KeyCounts{}) || rep.Done() || len(j.types) != 0 {
		t.Fatalf("check: %+v, journal %v", rep, j.types)
	}
	rep, err = svc.Rewrap(ctx, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	want := app.RewrapReport{
		Rewrapped: app.KeyCounts{Blobs: 10, Sessions: 1}, Current: app.KeyCounts{Blobs: 11, Sessions: 1},
		Unreadable: app.KeyCounts{Blobs: 1}, Rounds: 1,
	}
	if rep != want {
		t.Fatalf("rewrap: %+v, want %+v", rep, want)
	}
	// One session page; blob pages of 4 over 6+6 blobs, the second
	// holding both tenants: one event per tenant per page.
	if n := len(j.types); n != 5 {
		t.Fatalf("journalled %d attachment.rewrap events: %v", n, j.types)
	}
	for _, b := range repo.blobs {
		if b.TenantID == "tn_b" && b.Address == stranger.Address("tn_b", b.SHA256) {
			continue
		}
		if _, err := after.Unwrap(b.WrappedKey, b.TenantID, b.Address); err != nil {
			t.Fatalf("blob %s not under the new master alone: %v", b.Address, err)
		}
	}
	if _, err := after.Unwrap(repo.sessions["up_1"].WrappedKey, "tn_a", openAddr); err != nil {
		t.Fatalf("open session not rewrapped: %v", err)
	}
}

// A rewrap between a writer's lease and its completion is not lost: the
// blob takes the session's wrapped key as stored at completion, not the
// copy read with the lease.
func TestCompletionTakesTheStoredKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var moved []byte
	b.repo.leased = func(id string) {
		s := b.repo.sessions[id] // the fake holds its lock here
		dk, err := b.svc.Keys.Unwrap(s.WrappedKey, s.TenantID, s.Address)
		if err != nil {
			t.Error(err)
			return
		}
		moved, _ = b.svc.Keys.Wrap(dk, s.TenantID, s.Address)
		s.WrappedKey = moved
		b.repo.sessions[id] = s
	}
	ses := completed(t, b, b.ctx, "quote AM-7741")
	blob, err := b.repo.BlobGet(context.Background(), tenant, ses.ExpectedSHA256)
	if err != nil {
		t.Fatal(err)
	}
	if moved == nil || !bytes.Equal(blob.WrappedKey, moved) {
		t.Fatal("the blob kept the key read with the lease, not the one stored at completion")
	}
}
