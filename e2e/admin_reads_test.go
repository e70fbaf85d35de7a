package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// GET /v1/grants lists grants on a workarea (admin on it) or of a key
// (admin on universe), live now or in force at a permission epoch, a page
// at a time, and never another tenant's.
func TestGrantListings(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	type listed struct {
		Grants []struct {
			GrantID      string `json:"grant_id"`
			KeyID        string `json:"key_id"`
			Principal    string `json:"principal"`
			Workarea     string `json:"workarea"`
			WorkareaPath string `json:"workarea_path"`
			Scope        string `json:"scope"`
			Effect       string `json:"effect"`
			CreatedEpoch *int64 `json:"created_epoch"`
			RemovedEpoch *int64 `json:"removed_epoch"`
		} `json:"grants"`
		Epoch      int64   `json:"permission_epoch"`
		NextCursor *string `json:"next_cursor"`
	}
	get := func(key, query string) listed {
		t.Helper()
		return decode[listed](t, s.do(t, "GET", "/v1/grants?"+query, key, nil), 200)
	}
	got := get(s.AdminKey, "workarea=universe.procurement")
	if len(got.Grants) != 10 || got.NextCursor != nil {
		t.Fatalf("grants on universe.procurement: %+v", got)
	}
	for _, g := range got.Grants {
		if g.Principal == "" || g.Effect != "allow" || g.WorkareaPath != "universe.procurement" || g.CreatedEpoch == nil {
			t.Fatalf("grant %+v", g)
		}
	}
	if n := len(get(s.AdminKey, "workarea="+tm.crew.ID).Grants); n != 0 {
		t.Fatalf("inherited grants listed on the crew: %d", n)
	}
	// Pages of 4: 4, 4, 2, each cursor continuing the last.
	var ids []string
	cursor := ""
	for page := 0; ; page++ {
		q := "workarea=universe.procurement&limit=4"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		got := get(s.AdminKey, q)
		for _, g := range got.Grants {
			ids = append(ids, g.GrantID)
		}
		if got.NextCursor == nil {
			break
		}
		cursor = *got.NextCursor
		if page > 3 {
			t.Fatal("paging does not end")
		}
	}
	if len(ids) != 10 || !slices.IsSorted(ids) {
		t.Fatalf("paged %d grants: %v", len(ids), ids)
	}
	// By key, and at an epoch: the reviewer's three grants; remove one,
	// and the epoch before still shows it.
	mine := get(s.AdminKey, "key_id="+tm.reviewer.KeyID)
	if len(mine.Grants) != 3 {
		t.Fatalf("the reviewer's grants: %+v", mine)
	}
	before := mine.Epoch
	if r := s.do(t, "DELETE", "/v1/grants/"+mine.Grants[0].GrantID, s.AdminKey, nil); r.Status != 200 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	if n := len(get(s.AdminKey, "key_id="+tm.reviewer.KeyID).Grants); n != 2 {
		t.Fatalf("live after a removal: %d", n)
	}
	then := get(s.AdminKey, fmt.Sprintf("key_id=%s&epoch=%d", tm.reviewer.KeyID, before))
	if len(then.Grants) != 3 || then.Epoch != before {
		t.Fatalf("at epoch %d: %+v", before, then)
	}
	first := *mine.Grants[0].CreatedEpoch
	for _, g := range mine.Grants {
		first = min(first, *g.CreatedEpoch)
	}
	if n := len(get(s.AdminKey, fmt.Sprintf("key_id=%s&epoch=%d", tm.reviewer.KeyID, first-1)).Grants); n != 0 {
		t.Fatalf("before the first grant: %d", n)
	}
	// The bootstrap's grants carry their epochs too; a revoked key's
	// grants are in force before its revocation and not after.
	root := get(s.AdminKey, "workarea=universe&epoch=3")
	if len(root.Grants) != 2 {
		t.Fatalf("the bootstrap's grants at epoch 3: %+v", root)
	}
	temp := s.issueKey(t, "temp-1", "reader")
	s.grant(t, temp.KeyID, "universe.procurement", "reader", "allow")
	tempGrants := get(s.AdminKey, "key_id="+temp.KeyID)
	s.mustOML(t, s.AdminKey, "key", "revoke", temp.KeyID)
	if n := len(get(s.AdminKey, fmt.Sprintf("key_id=%s&epoch=%d", temp.KeyID, tempGrants.Epoch)).Grants); n != 1 {
		t.Fatalf("a key's grants before its revocation: %d", n)
	}
	now := get(s.AdminKey, "workarea=universe")
	if n := len(get(s.AdminKey, fmt.Sprintf("key_id=%s&epoch=%d", temp.KeyID, now.Epoch)).Grants); n != 0 {
		t.Fatalf("a revoked key's grants in force after its revocation: %d", n)
	}
	if out := s.mustOML(t, s.AdminKey, "grant", "list", "--workarea", "universe.procurement"); strings.Count(out, "reviewer-1") != 2 || !strings.Contains(out, "dreamer.review") {
		t.Fatalf("oml grant list: %s", out)
	}
	if out := s.mustOML(t, s.AdminKey, "grant", "list", "--key", tm.reviewer.KeyID, "--epoch", fmt.Sprint(before)); strings.Count(out, "reviewer-1") != 3 {
		t.Fatalf("oml grant list --key --epoch: %s", out)
	}

	// Another tenant's admin sees none of these, and its ids are missing.
	other := s.bootstrapTenant(t, "globex")
	for name, c := range map[string]struct {
		key, query string
		status     int
		code       string
	}{
		"another tenant's workarea": {other, "workarea=" + tm.crew.ID, 404, "access.not_found"},
		"another tenant's key":      {other, "key_id=" + tm.reviewer.KeyID, 404, "access.not_found"},
		"a reader":                  {tm.reader.Token, "workarea=universe.procurement", 403, "access.denied"},
		"a reader, by key":          {tm.reader.Token, "key_id=" + tm.reader.KeyID, 403, "access.verb_ceiling"},
		"nothing named":             {s.AdminKey, "", 400, "request.validation"},
		"unknown param":             {s.AdminKey, "workarea=universe&key=x", 400, "request.validation"},
		"unknown node":              {s.AdminKey, "workarea=universe.nowhere", 404, "access.not_found"},
		"unreadable node":           {tm.reader.Token, "workarea=universe", 404, "access.not_found"},
		"a forged cursor":           {s.AdminKey, "workarea=universe&cursor=x", 400, "request.validation"},
		"a future epoch":            {s.AdminKey, "workarea=universe&epoch=99999", 400, "request.validation"},
		"a negative epoch":          {s.AdminKey, "workarea=universe&epoch=-1", 400, "request.validation"},
		"a huge page":               {s.AdminKey, "workarea=universe&limit=501", 422, "limit.ceiling"},
		"twice":                     {s.AdminKey, "workarea=universe&workarea=universe", 400, "request.validation"},
	} {
		if r := s.do(t, "GET", "/v1/grants?"+c.query, c.key, nil); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}

// GET /v1/workareas lists the tree a key reads — parents before children,
// deny grants carving subtrees out, paged — and nothing of another
// tenant's.
func TestWorkareaListing(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	s.createWorkarea(t, "universe.procurement.metals-crew", "q1")
	s.createWorkarea(t, "universe.procurement", "secret")
	s.createWorkarea(t, "universe", "legal")
	s.grant(t, tm.reader.KeyID, "universe.procurement.secret", "reader", "deny")
	type listed struct {
		Workareas []struct {
			ID     string  `json:"id"`
			Path   string  `json:"path"`
			Parent *string `json:"parent"`
			Status string  `json:"status"`
		} `json:"workareas"`
		NextCursor *string `json:"next_cursor"`
	}
	paths := func(key string, limit int) []string {
		t.Helper()
		var out []string
		cursor := ""
		for range 20 {
			q := fmt.Sprintf("/v1/workareas?limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			got := decode[listed](t, s.do(t, "GET", q, key, nil), 200)
			for _, w := range got.Workareas {
				out = append(out, w.Path)
			}
			if got.NextCursor == nil {
				return out
			}
			cursor = *got.NextCursor
		}
		t.Fatal("paging does not end")
		return nil
	}
	all := paths(s.AdminKey, 500)
	if len(all) != 6 || all[0] != "universe" {
		t.Fatalf("the admin's tree: %v", all)
	}
	index := map[string]int{}
	for i, p := range all {
		index[p] = i
	}
	for _, p := range all[1:] {
		if parent := p[:strings.LastIndex(p, ".")]; index[parent] >= index[p] {
			t.Fatalf("%s listed before its parent: %v", p, all)
		}
	}
	if paged := paths(s.AdminKey, 2); !slices.Equal(paged, all) {
		t.Fatalf("pages of 2: %v, want %v", paged, all)
	}
	want := []string{"universe.procurement", "universe.procurement.metals-crew", "universe.procurement.metals-crew.q1"}
	if got := paths(tm.reader.Token, 1); !slices.Equal(got, want) {
		t.Fatalf("the reader's tree (secret denied): %v, want %v", got, want)
	}
	if out := s.mustOML(t, tm.reader.Token, "workarea", "list"); !strings.Contains(out, "universe.procurement.metals-crew.q1") || strings.Contains(out, "secret") {
		t.Fatalf("oml workarea list: %s", out)
	}
	other := s.bootstrapTenant(t, "initech")
	if got := paths(other, 100); !slices.Equal(got, []string{"universe"}) {
		t.Fatalf("another tenant's tree: %v", got)
	}
	for name, c := range map[string]struct {
		query  string
		status int
		code   string
	}{
		"a forged cursor":         {"cursor=nope", 400, "request.validation"},
		"another tenant's cursor": {"cursor=" + tm.crew.ID + "x", 400, "request.validation"},
		"a huge page":             {"limit=501", 422, "limit.ceiling"},
		"unknown param":           {"depth=2", 400, "request.validation"},
	} {
		if r := s.do(t, "GET", "/v1/workareas?"+c.query, other, nil); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	// A cursor from another tenant lists nothing there.
	if got := decode[listed](t, s.do(t, "GET", "/v1/workareas?cursor="+tm.crew.ID, other, nil), 200); len(got.Workareas) != 0 {
		t.Fatalf("another tenant's cursor listed %+v", got)
	}
}

// GET /v1/read-log lists who read what — a key's reads for a tenant
// admin, the reads scoped to a workarea for its admins — newest first and
// paged; the sweep deletes read-log rows and idempotency records past
// their retention and keeps the rest.
func TestReadLogListingAndRetention(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_EXPIRY_INTERVAL=1s", "OML_READ_LOG_RETENTION=1h", "OML_IDEMPOTENCY_RETENTION=1h")
	tm := newTeam(t, s)
	reader := s.mcpSession(t, tm.reader.Token, "2025-11-25")
	for i := range 3 {
		toolJSON[recallOut](t, reader, "oml_recall", map[string]any{"query": fmt.Sprintf("copper %d", i), "scope": tm.crew.ID})
	}
	toolJSON[recallOut](t, reader, "oml_recall", map[string]any{"query": "tin", "scope": "universe.procurement"})
	type listed struct {
		Reads []struct {
			ID          string   `json:"id"`
			KeyID       string   `json:"key_id"`
			Workarea    string   `json:"workarea"`
			Operation   string   `json:"operation"`
			QuerySHA256 string   `json:"query_sha256"`
			Returned    []string `json:"returned"`
		} `json:"reads"`
		NextCursor *string `json:"next_cursor"`
	}
	get := func(key, query string) listed {
		t.Helper()
		return decode[listed](t, s.do(t, "GET", "/v1/read-log?"+query, key, nil), 200)
	}
	all := get(s.AdminKey, "key_id="+tm.reader.KeyID)
	if len(all.Reads) != 4 || all.Reads[0].Workarea == tm.crew.ID || all.Reads[0].Operation != "recall" || len(all.Reads[0].QuerySHA256) != 64 {
		t.Fatalf("the reader's reads, newest first: %+v", all)
	}
	first := get(s.AdminKey, "key_id="+tm.reader.KeyID+"&limit=3")
	if len(first.Reads) != 3 || first.NextCursor == nil {
		t.Fatalf("a page of 3: %+v", first)
	}
	if rest := get(s.AdminKey, "key_id="+tm.reader.KeyID+"&limit=3&cursor="+*first.NextCursor); len(rest.Reads) != 1 || rest.NextCursor != nil || rest.Reads[0].ID != all.Reads[3].ID {
		t.Fatalf("the next page: %+v", rest)
	}
	if crew := get(s.AdminKey, "workarea=universe.procurement.metals-crew"); len(crew.Reads) != 3 {
		t.Fatalf("reads scoped to the crew: %+v", crew)
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "read-log", "--key", tm.reader.KeyID); strings.Count(out, "recall") != 4 {
		t.Fatalf("oml admin read-log: %s", out)
	}
	other := s.bootstrapTenant(t, "hooli")
	for name, c := range map[string]struct {
		key, query string
		status     int
		code       string
	}{
		"a reader":                  {tm.reader.Token, "key_id=" + tm.reader.KeyID, 403, "access.verb_ceiling"},
		"a reader on its workarea":  {tm.reader.Token, "workarea=" + tm.crew.ID, 403, "access.denied"},
		"another tenant's workarea": {other, "workarea=" + tm.crew.ID, 404, "access.not_found"},
		"nothing named":             {s.AdminKey, "", 400, "request.validation"},
		"a forged cursor":           {s.AdminKey, "key_id=x&cursor=abc", 400, "request.validation"},
		"a huge page":               {s.AdminKey, "key_id=x&limit=501", 422, "limit.ceiling"},
		"unknown param":             {s.AdminKey, "key=x", 400, "request.validation"},
	} {
		if r := s.do(t, "GET", "/v1/read-log?"+c.query, c.key, nil); r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if got := get(other, "key_id="+tm.reader.KeyID); len(got.Reads) != 0 {
		t.Fatalf("another tenant's admin reads %+v", got)
	}

	// Retention: two reads and an idempotency record made old are swept
	// within a few sweeps; the fresh ones stay.
	writer := s.mcpSession(t, tm.writer.Token, "2025-11-25")
	toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "old", "text": "old", "idempotency_key": "old-1"})
	toolJSON[remembered](t, writer, "oml_remember", map[string]any{"workarea": tm.crew.ID, "claim_key": "new", "text": "new", "idempotency_key": "new-1"})
	s.sql(t, `UPDATE retrieval.read_log SET at = now() - interval '2 hours' WHERE id IN (SELECT id FROM retrieval.read_log ORDER BY id LIMIT 2)`)
	s.sql(t, `UPDATE platform.idempotency_records SET created_at = now() - interval '2 hours' WHERE idempotency_key = 'old-1'`)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if s.count(t, `SELECT count(*) FROM retrieval.read_log`) == 2 && s.count(t, `SELECT count(*) FROM platform.idempotency_records`) == 1 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := s.count(t, `SELECT count(*) FROM retrieval.read_log`); n != 2 {
		t.Fatalf("read-log rows after the sweep: %d, want 2", n)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.idempotency_records WHERE idempotency_key = 'new-1'`); n != 1 {
		t.Fatal("the fresh idempotency record was swept")
	}
	if n := s.count(t, `SELECT count(*) FROM platform.idempotency_records WHERE idempotency_key = 'old-1'`); n != 0 {
		t.Fatal("the old idempotency record was kept")
	}
}
