package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// The surface fuzzers drive the assembled server on a real database, in
// process: any tool with any arguments, any route with any path
// parameters, query and body, as any of the fixture's keys. Nothing may
// answer internal (HTTP 5xx, or a tool result or JSON-RPC error that is
// internal): every bad input is a typed refusal.

type fuzzSurface struct {
	env   *benchEnv
	keys  []string
	tools []string
	// routes are "METHOD pattern" of every /v1 route.
	routes []string
}

func newFuzzSurface(f *testing.F) *fuzzSurface {
	env, err := newBenchEnv(f)
	if err != nil {
		f.Fatal(err)
	}
	s := &fuzzSurface{env: env, keys: []string{env.adminKey, env.key, env.reviewerKey, ""}}
	rec := s.mcp(env.key, "tools/list", `{}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Result.Tools) == 0 {
		f.Fatalf("tools/list: %d %s", rec.Code, rec.Body)
	}
	for _, t := range list.Result.Tools {
		s.tools = append(s.tools, t.Name)
	}
	err = chi.Walk(env.app.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, "/v1/") {
			s.routes = append(s.routes, method+" "+strings.TrimSuffix(route, "/"))
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	slices.Sort(s.routes)
	return s
}

func (s *fuzzSurface) mcp(key, method, params string) *httptest.ResponseRecorder {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	s.env.app.handler.ServeHTTP(rec, req)
	return rec
}

// FuzzMCPTools calls tool (an index into the catalog) with args as its
// arguments (a JSON value when args is one, else a JSON string).
func FuzzMCPTools(f *testing.F) {
	s := newFuzzSurface(f)
	for i, name := range s.tools {
		f.Add(uint8(i), uint8(1), []byte(`{}`))
		f.Add(uint8(i), uint8(1), []byte(`{"workarea":"`+s.env.workarea+`","query":"copper","path":"/fs/a.md","text":"x"}`))
		f.Add(uint8(i), uint8(0), []byte(`{"workarea":"universe.procurement","limit":-1,"cursor":"%00","since":"x"}`))
		_ = name
	}
	f.Add(uint8(0), uint8(3), []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, tool, key uint8, args []byte) {
		name := s.tools[int(tool)%len(s.tools)]
		raw := args
		if !json.Valid(raw) {
			raw, _ = json.Marshal(string(args))
		}
		if strings.HasSuffix(name, "_wait") {
			// A long-poll would hold each input for up to a minute: wait
			// 0 reads once, through the same decoding.
			var m map[string]any
			if json.Unmarshal(raw, &m) == nil && m != nil {
				m["wait_seconds"] = 0
				raw, _ = json.Marshal(m)
			}
		}
		params, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(raw)})
		rec := s.mcp(s.keys[int(key)%len(s.keys)], "tools/call", string(params))
		checkAnswer(t, name+" "+string(args), rec)
	})
}

// FuzzRoutes sends method and route (an index into the /v1 routes) with
// each {param} replaced by param, the query and the body.
func FuzzRoutes(f *testing.F) {
	s := newFuzzSurface(f)
	for i := range s.routes {
		f.Add(uint8(i), uint8(1), s.env.workarea, "limit=2", []byte(`{}`))
		f.Add(uint8(i), uint8(0), "universe.procurement", "cursor=x&limit=-1", []byte(`{"workarea":"`+s.env.workarea+`","text":"x","claim_key":"k"}`))
	}
	f.Add(uint8(0), uint8(3), "\x00", "a=%ff", []byte("\xff"))
	param := regexp.MustCompile(`\{[^}]+\}`)
	f.Fuzz(func(t *testing.T, route, key uint8, value, query string, body []byte) {
		method, pattern, _ := strings.Cut(s.routes[int(route)%len(s.routes)], " ")
		path := param.ReplaceAllLiteralString(pattern, url.PathEscape(value))
		target := path
		if strings.Contains(strings.ToLower(query), "wait") {
			return // a long-poll holds an input for up to a minute
		}
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		req := httptest.NewRequest(method, "/", bytes.NewReader(body))
		req.URL = u
		req.RequestURI = ""
		req.Header.Set("Content-Type", "application/json")
		if k := s.keys[int(key)%len(s.keys)]; k != "" {
			req.Header.Set("Authorization", "Bearer "+k)
		}
		rec := httptest.NewRecorder()
		s.env.app.handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s (%d bytes): %d %s", method, target, len(body), rec.Code, rec.Body)
		}
	})
}

// checkAnswer fails on an MCP answer that is not a typed one.
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s: HTTP %d %s", what, rec.Code, rec.Body)
	}
	if rec.Code != 200 {
		return // a typed HTTP refusal before the SDK (size, auth)
	}
	var ans struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatalf("%s: answer is not JSON-RPC: %s", what, rec.Body)
	}
	switch {
	case ans.Error != nil && ans.Error.Code == -32603:
		t.Fatalf("%s: JSON-RPC internal error: %s", what, rec.Body)
	case ans.Result != nil && ans.Result.IsError && ans.Result.StructuredContent.Error.Code == "internal":
		t.Fatalf("%s: internal: %s", what, rec.Body)
	}
}
