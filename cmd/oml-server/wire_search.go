package main

import (
	"context"
	"errors"
	"time"

	"github.com/omlhub/oml/contexts/retrieval"
	"github.com/omlhub/oml/contexts/sessions"
)

// searchSessions adapts the sessions context to retrieval's Sessions
// port; it binds once the sessions module exists (search needs sessions,
// sessions push brains to search).
type searchSessions struct{ m *sessions.Module }

func (a *searchSessions) Own(ctx context.Context, limit int) ([]string, error) {
	if a.m == nil {
		return nil, errors.New("search: the sessions context is not wired")
	}
	return a.m.OwnSessions(ctx, limit)
}

func (a *searchSessions) Owns(ctx context.Context, id string) (bool, error) {
	if a.m == nil {
		return false, errors.New("search: the sessions context is not wired")
	}
	return a.m.OwnsSession(ctx, id)
}

// inboxSearch adapts retrieval's search corpus to the inbox context's
// Search port.
type inboxSearch struct{ m *retrieval.Module }

func (a inboxSearch) IndexEvent(ctx context.Context, tenant, id, workareaID, idPath, kind, actor, body string, at time.Time) error {
	return a.m.IndexSearchRow(ctx, retrieval.SearchRow{TenantID: tenant, Corpus: retrieval.CorpusEvent, ID: id, WorkareaID: workareaID,
		WorkareaIDPath: idPath, Title: kind, Body: body, Actor: actor, At: at})
}

// brainSearch adapts retrieval's search corpus to the sessions context's
// BrainSearch port.
type brainSearch struct{ m *retrieval.Module }

func (a brainSearch) IndexBrainEntry(ctx context.Context, tenant string, s sessions.Session, path, content, byKey string, at time.Time) error {
	return a.m.IndexSearchRow(ctx, retrieval.SearchRow{TenantID: tenant, Corpus: retrieval.CorpusBrain, ID: s.ID + ":" + path,
		WorkareaID: s.WorkareaID, WorkareaIDPath: s.WorkareaIDPath, SessionID: s.ID, Title: path, Body: content, Actor: byKey, At: at})
}

func (a brainSearch) DropBrainEntry(ctx context.Context, tenant, session, path string) error {
	return a.m.DropSearchRow(ctx, tenant, retrieval.CorpusBrain, session+":"+path)
}

func (a brainSearch) CopyBrain(ctx context.Context, tenant, from, to string) error {
	return a.m.CopySearchSession(ctx, tenant, from, to)
}

func (a brainSearch) DropBrain(ctx context.Context, tenant, session string) error {
	return a.m.DropSearchSession(ctx, tenant, session)
}
