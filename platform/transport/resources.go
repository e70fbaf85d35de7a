package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/textsafe"
)

// The MCP resources (seed 002, "Resources"): the bootstrap, the
// installable skill's files, and the knowledge base's pages by template.
const (
	skillURI         = "oml://skill"
	skillDir         = "skill://oml/"
	kbTemplate       = "oml://kb/{workarea}/{+path}"
	kbPrefix         = "oml://kb/"
	resourcesPage    = 100
	maxResourceURI   = 2048
	maxKBPath        = 512
	skillExtension   = "io.modelcontextprotocol/skills"
	skillFrontMatter = "---\nname: oml\ndescription: Use OML, a governed shared memory and coordination hub for agents: what you write is held until another identity ratifies it; recall, sessions, brains, the human's inbox.\n---\n\n"
)

// staticResources are the resources every key lists, in listing order.
var staticResources = []*mcp.Resource{
	{URI: skillURI, Name: "oml-bootstrap", Title: "OML bootstrap", MIMEType: "text/markdown",
		Description: "How to connect to this OML deployment and what to call first."},
	{URI: skillDir + "SKILL.md", Name: "oml-skill", Title: "OML skill: SKILL.md", MIMEType: "text/markdown",
		Description: "The OML skill: the agent guide under the skill's front matter."},
	{URI: skillDir + "references/tools.md", Name: "oml-skill-tools", Title: "OML skill: references/tools.md", MIMEType: "text/markdown",
		Description: "Every tool this deployment serves, with what it does."},
}

// resources serves the resources: the bootstrap and the skill (the agent
// guide with this deployment's URL, and the tool catalog as it is now),
// then the knowledge base's promoted pages the caller may read (seed 002:
// a missing page is resource-not-found, a URI under oml://kb/ that names
// no page is invalid params).
type resources struct {
	guide []byte // the agent guide, URL filled in
	tools *Tools
	kb    KBResources // nil: no knowledge base
}

// addResources registers the resources and the template (the SDK then
// advertises them and lists the template); list and read are answered by
// handle, which Tools' receiving middleware runs inside the panic guard
// and the rate limit.
func (t *Tools) addResources(guide []byte, kb KBResources) {
	r := &resources{guide: guide, tools: t, kb: kb}
	for _, res := range staticResources {
		t.server.AddResource(res, r.read)
	}
	t.server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: kbTemplate, Name: "oml-kb-page", Title: "Knowledge base page",
		Description: "A promoted knowledge base page of a workarea, by its path under /fs/ (each segment percent-encoded)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return r.read(ctx, req)
		})
	t.res = r
}

// SkillMarkdown is the skill's SKILL.md: the agent guide under the
// skill's front matter (also GET /bootstrap/SKILL.md).
func SkillMarkdown(guide []byte) []byte {
	return append([]byte(skillFrontMatter), guide...)
}

// notFound is resource-not-found with the URI in its data, JSON-encoded
// whatever the URI holds.
func notFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
}

func invalidURI(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why}
}

// kbURI is a page's URI: each segment percent-encoded.
func kbURI(workarea, path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/fs/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return kbPrefix + url.PathEscape(workarea) + "/" + strings.Join(segs, "/")
}

// mimeOf is a page's media type: markdown for .md, else plain text.
func mimeOf(path string) string {
	if strings.HasSuffix(strings.ToLower(path), ".md") {
		return "text/markdown"
	}
	return "text/plain"
}

// read answers every resources/read.
func (r *resources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if len(uri) > maxResourceURI {
		return nil, invalidURI("a resource URI is at most 2048 bytes")
	}
	var text string
	switch uri {
	case skillURI:
		text = string(r.guide)
	case skillDir + "SKILL.md":
		text = string(SkillMarkdown(r.guide))
	case skillDir + "references/tools.md":
		text = r.toolsReference()
	default:
		if !strings.HasPrefix(uri, kbPrefix) {
			return nil, notFound(uri)
		}
		workarea, path, err := parseKBURI(uri)
		if err != nil {
			return nil, invalidURI(err.Error())
		}
		if r.kb == nil {
			return nil, notFound(uri)
		}
		text, err := r.kb.Page(ctx, workarea, path)
		if errs.Is(err, errs.NotFound) {
			return nil, notFound(uri)
		}
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeOf(path), Text: text}}}, nil
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}

// toolsReference lists the tools as this server has them.
func (r *resources) toolsReference() string {
	var b strings.Builder
	b.WriteString("# OML tools\n\nEvery tool this deployment serves, with what it does; `tools/list` has their input and output schemas.\n")
	names := make([]string, 0, len(r.tools.specs))
	for n := range r.tools.specs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b.WriteString("\n## " + n + "\n\n" + r.tools.specs[n].Description + "\n")
	}
	return b.String()
}

// parseKBURI splits oml://kb/{workarea}/{path} into the workarea and the
// page's path under /fs/, each segment percent-decoded: valid UTF-8,
// without control, format or separator characters, no empty, "." or ".."
// segment, the path at most 512 bytes.
func parseKBURI(uri string) (workarea, path string, err error) {
	rest, ok := strings.CutPrefix(uri, kbPrefix)
	if !ok {
		return "", "", errors.New("not a knowledge base URI: want " + kbTemplate)
	}
	ws, p, ok := strings.Cut(rest, "/")
	if !ok || ws == "" || p == "" {
		return "", "", errors.New("a knowledge base URI names a workarea and a page: " + kbTemplate)
	}
	segs := append([]string{ws}, strings.Split(p, "/")...)
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil || d == "" || d == "." || d == ".." || strings.Contains(d, "/") || !utf8.ValidString(d) ||
			strings.ContainsFunc(d, func(r rune) bool { return !textsafe.NameRune(r) }) {
			return "", "", errors.New("each segment is one percent-encoded name (no empty, . or .. segment, no control characters)")
		}
		segs[i] = d
	}
	path = "/fs/" + strings.Join(segs[1:], "/")
	if len(path) > maxKBPath {
		return "", "", errors.New("a page's path is at most 512 bytes")
	}
	return segs[0], path, nil
}

// list is one page of resources/list: the static resources, then the
// knowledge base's pages in (workarea id, path) order. A page's
// nextCursor is the URI of its last resource; a cursor that is neither a
// static resource's URI nor a well-formed page URI is invalid params.
func (r *resources) list(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	var out []*mcp.Resource
	afterWorkarea, afterPath := "", ""
	start := 0
	if p != nil && p.Cursor != "" {
		i := slices.IndexFunc(staticResources, func(x *mcp.Resource) bool { return x.URI == p.Cursor })
		switch {
		case i >= 0:
			start = i + 1
		case strings.HasPrefix(p.Cursor, kbPrefix) && len(p.Cursor) <= maxResourceURI:
			w, path, err := parseKBURI(p.Cursor)
			if err != nil {
				return nil, invalidURI("cursor: not one this listing gave (a nextCursor is the URI of a page's last resource)")
			}
			start, afterWorkarea, afterPath = len(staticResources), w, path
		default:
			return nil, invalidURI("cursor: not one this listing gave (a nextCursor is the URI of a page's last resource)")
		}
	}
	if start < len(staticResources) {
		out = append(out, staticResources[start:min(start+resourcesPage, len(staticResources))]...)
	}
	more := false
	if room := resourcesPage - len(out); room > 0 && r.kb != nil {
		pages, err := r.kb.Pages(ctx, afterWorkarea, afterPath, room+1)
		if err != nil {
			return nil, err
		}
		if len(pages) > room {
			pages, more = pages[:room], true
		}
		for _, pg := range pages {
			out = append(out, &mcp.Resource{URI: kbURI(pg.Workarea, pg.Path), Name: pg.Path, MIMEType: mimeOf(pg.Path), Size: pg.Size,
				Title: "Knowledge base page " + pg.Path})
		}
	} else if room <= 0 {
		more = true
	}
	// Private: the list is the caller's own.
	res := &mcp.ListResourcesResult{Resources: out, Cacheable: mcp.Cacheable{CacheScope: "private"}}
	if more && len(out) > 0 {
		res.NextCursor = out[len(out)-1].URI
	}
	if res.Resources == nil {
		res.Resources = []*mcp.Resource{}
	}
	return res, nil
}

// handle answers resources/list and resources/read: the bootstrap and the
// skill first, then the knowledge base's pages,
// resourcesPage at a time; a page's nextCursor is the URI of its last
// resource, and a cursor that is not a URI this listing gave is invalid
// params. A read of anything but the static resources gets its refusal
// from read.
func (r *resources) handle(ctx context.Context, method string, req mcp.Request) (mcp.Result, bool, error) {
	switch p := req.GetParams().(type) {
	case *mcp.ReadResourceParams:
		if method != "resources/read" || p == nil {
			return nil, false, nil
		}
		// The static resources and well-formed page URIs go the SDK's way
		// (which marks the result complete for every protocol era, and
		// calls read through the template); every other URI is refused
		// here, whatever the SDK's template matcher would do with it.
		if slices.ContainsFunc(staticResources, func(x *mcp.Resource) bool { return x.URI == p.URI }) {
			return nil, false, nil
		}
		if len(p.URI) <= maxResourceURI && strings.HasPrefix(p.URI, kbPrefix) && r.kb != nil {
			if _, _, err := parseKBURI(p.URI); err == nil {
				return nil, false, nil
			}
		}
		_, err := r.read(ctx, &mcp.ReadResourceRequest{Params: p})
		return nil, true, err
	case *mcp.ListResourcesParams:
		if method != "resources/list" {
			return nil, false, nil
		}
		out, err := r.list(ctx, p)
		return out, true, err
	}
	return nil, false, nil
}
