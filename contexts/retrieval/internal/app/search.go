package app

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/scope"
	"github.com/omlhub/oml/platform/textsafe"
)

// Search bounds.
const (
	DefaultSearchHits = 20
	MaxSearchHits     = 100
	MaxSearchQuery    = 1000
	// MaxSearchSessions bounds the caller's own sessions whose brains a
	// search covers (the most recently active first).
	MaxSearchSessions = 1000
	// searchText is how much of a row is indexed and kept for snippets.
	searchText = 256 << 10
)

// The search corpora.
const (
	CorpusEvent = "event"
	CorpusBrain = "brain"
	CorpusPage  = "page"
	// CorpusDocument is a promoted document's version.
	CorpusDocument = "document"
)

// SearchRow is a row another context makes searchable.
type SearchRow struct {
	TenantID       string
	Corpus         string // event | brain
	ID             string // an event id; a brain entry's session id + ":" + path
	WorkareaID     string
	WorkareaIDPath string
	SessionID      string // brain rows
	Title          string // the event kind; the brain entry's path
	Body           string
	Actor          string
	At             time.Time
}

// SearchFilter is what one search may reach.
type SearchFilter struct {
	Within   Subtrees
	Scope    string // an id path ("" for everything within)
	Events   bool
	Pages    bool
	Sessions []string
	Limit    int
}

// Found is a ranked row.
type Found struct {
	Corpus     string
	ID         string
	WorkareaID string
	SessionID  string
	Title      string
	Actor      string
	At         time.Time
	Score      float64
}

// SearchRepo is the search corpus's storage; writes run in the caller's
// unit of work.
type SearchRepo interface {
	SearchPut(ctx context.Context, r SearchRow) error
	SearchDelete(ctx context.Context, tenant, corpus, id string) error
	SearchDropSession(ctx context.Context, tenant, session string) error
	SearchCopySession(ctx context.Context, tenant, from, to string) error
	Search(ctx context.Context, tenant, query string, f SearchFilter) ([]Found, error)
	// Snippets highlights the query in each row's text, by row id.
	Snippets(ctx context.Context, tenant, query string, ids []string) (map[string]string, error)
	// SearchReparse re-parses up to 1,000 rows whose tsvector is not their
	// text in the tenant's language; it returns how many.
	SearchReparse(ctx context.Context, tenant string) (int, error)
}

// Sessions is the sessions context as search needs it: the caller's own
// sessions, whose brains it may search.
type Sessions interface {
	// Own lists the caller principal's sessions (not pruned), the most
	// recently active first, at most limit.
	Own(ctx context.Context, limit int) ([]string, error)
	// Owns reports whether the session is the caller principal's and
	// not pruned.
	Owns(ctx context.Context, id string) (bool, error)
}

// SearchQuery is one search: a workarea's subtree, one of the caller's
// sessions, or (neither) everything the key may read.
type SearchQuery struct {
	Query     string
	Workarea  string
	SessionID string
	Limit     int
}

// Hit is a search hit as shown.
type Hit struct {
	Found
	WorkareaPath string
	Snippet      string
}

// IndexSearchRow makes a row searchable (or updates it), in the caller's
// unit of work; its first 256 KiB are indexed.
func (s *Service) IndexSearchRow(ctx context.Context, r SearchRow) error {
	if len(r.Body) > searchText {
		r.Body = textsafe.Clip(r.Body, searchText-len("…"))
	}
	return s.SearchRepo.SearchPut(ctx, r)
}

// DropSearchRow removes a row.
func (s *Service) DropSearchRow(ctx context.Context, tenant, corpus, id string) error {
	return s.SearchRepo.SearchDelete(ctx, tenant, corpus, id)
}

// DropSearchSession removes a session's brain rows (a prune).
func (s *Service) DropSearchSession(ctx context.Context, tenant, session string) error {
	return s.SearchRepo.SearchDropSession(ctx, tenant, session)
}

// CopySearchSession copies a session's brain rows to another (a fork).
func (s *Service) CopySearchSession(ctx context.Context, tenant, from, to string) error {
	return s.SearchRepo.SearchCopySession(ctx, tenant, from, to)
}

// Search ranks feed events, the caller's own session brains and promoted
// knowledge-base pages by the full-text machinery recall uses (the
// tenant's language, an entry's lead weighted), confined to the subtrees
// the key reads: a hit is a row its reader may see, nothing else (held
// pages are not in the corpus at all; another's brain is not among the
// caller's sessions).
func (s *Service) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	c, err := auth.ContentCaller(ctx, "search")
	if err != nil {
		return nil, err
	}
	q.Query = strings.TrimSpace(q.Query)
	switch {
	case q.Query == "":
		return nil, errs.Invalid("query is required")
	case len(q.Query) > MaxSearchQuery || !utf8.ValidString(q.Query):
		return nil, errs.Invalid("query: at most %d bytes of UTF-8", MaxSearchQuery)
	case !positiveTerm(q.Query):
		return nil, errs.Invalid("query: give at least one word to find (a query of only -exclusions would match everything)")
	case q.Workarea != "" && q.SessionID != "":
		return nil, errs.Invalid("search a workarea or a session_id, not both")
	case q.Limit < 0 || q.Limit > MaxSearchHits:
		return nil, errs.Invalid("limit: 1–%d", MaxSearchHits)
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchHits
	}
	within, err := s.Access.Subtrees(ctx, scope.Reader)
	if err != nil {
		return nil, err
	}
	f := SearchFilter{Within: within, Events: true, Pages: true, Limit: q.Limit}
	switch {
	case q.SessionID != "":
		found, err := s.Sessions.Owns(ctx, q.SessionID)
		if err != nil {
			return nil, fmt.Errorf("own session: %w", err)
		}
		if !found {
			return nil, errs.New(errs.NotFound, "search covers the caller's own session brains; another's answers as a missing one",
				"no session of yours with that id")
		}
		f.Events, f.Pages, f.Sessions = false, false, []string{q.SessionID}
	case q.Workarea != "":
		w, err := s.Access.Workarea(ctx, q.Workarea)
		if err != nil {
			return nil, err
		}
		if !w.Reader {
			return nil, errs.New(errs.NotFound, "search needs reader access on its workarea (D7)", "no readable workarea with that reference for this key")
		}
		if f.Sessions, err = s.Sessions.Own(ctx, MaxSearchSessions); err != nil {
			return nil, fmt.Errorf("own sessions: %w", err)
		}
		f.Scope = w.IDPath
	default:
		if f.Sessions, err = s.Sessions.Own(ctx, MaxSearchSessions); err != nil {
			return nil, fmt.Errorf("own sessions: %w", err)
		}
	}
	found, err := s.SearchRepo.Search(ctx, c.TenantID, q.Query, f)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if len(found) == 0 {
		return []Hit{}, nil
	}
	ids := make([]string, len(found))
	wids := make([]string, 0, len(found))
	for i, h := range found {
		ids[i] = h.ID
		wids = append(wids, h.WorkareaID)
	}
	snippets, err := s.SearchRepo.Snippets(ctx, c.TenantID, q.Query, ids)
	if err != nil {
		return nil, fmt.Errorf("search snippets: %w", err)
	}
	paths, err := s.Access.Paths(ctx, wids)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(found))
	for i, h := range found {
		out[i] = Hit{Found: h, WorkareaPath: paths[h.WorkareaID], Snippet: snippets[h.ID]}
	}
	return out, nil
}

// positiveTerm reports whether a web-search query has a word to find: a
// term with a letter or digit that is neither an exclusion (-word) nor the
// operator "or".
func positiveTerm(q string) bool {
	for _, f := range strings.Fields(q) {
		f = strings.Trim(f, `"`)
		if f == "" || strings.HasPrefix(f, "-") || strings.EqualFold(f, "or") {
			continue
		}
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			return true
		}
	}
	return false
}
