package transport

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP resources (seed 002, "Resources"): the bootstrap, the
// installable skill's files, and the knowledge base's pages by template.
const (
	SkillURI         = "oml://skill"
	SkillDir         = "skill://oml/"
	KBTemplate       = "oml://kb/{workarea}/{+path}"
	kbPrefix         = "oml://kb/"
	resourcesPage    = 100
	skillExtension   = "io.modelcontextprotocol/skills"
	skillFrontMatter = "---\nname: oml\ndescription: Use OML, a governed shared memory and coordination hub for agents: what you write is held until another identity ratifies it; recall, sessions, brains, the human's inbox.\n---\n\n"
)

// skillFiles are the skill's files under SkillDir, in listing order.
var skillFiles = []string{"SKILL.md", "references/tools.md"}

// resources serves the resources: the bootstrap and the skill (the agent
// guide with this deployment's URL, and the tool catalog as it is now),
// and, for oml://kb/ URIs, the refusals of a knowledge base that holds no
// page yet (seed 002: a missing page is resource-not-found, a URI under
// oml://kb/ that names no page is invalid params).
type resources struct {
	guide []byte // the agent guide, URL filled in
	tools *Tools
}

func (t *Tools) addResources(guide []byte) {
	r := &resources{guide: guide, tools: t}
	t.server.AddResource(&mcp.Resource{URI: SkillURI, Name: "oml-bootstrap", Title: "OML bootstrap",
		Description: "How to connect to this OML deployment and what to call first.", MIMEType: "text/markdown"}, r.read)
	for _, f := range skillFiles {
		t.server.AddResource(&mcp.Resource{URI: SkillDir + f, Name: "oml-skill-" + strings.TrimSuffix(strings.ReplaceAll(f, "/", "-"), ".md"),
			Title: "OML skill: " + f, MIMEType: "text/markdown"}, r.read)
	}
	t.server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: KBTemplate, Name: "oml-kb-page", Title: "Knowledge base page",
		Description: "A promoted knowledge base page of a workarea, by its path under /fs/ (each segment percent-encoded)."}, r.readKB)
	t.server.AddReceivingMiddleware(r.list)
}

// SkillMarkdown is the skill's SKILL.md: the agent guide under the
// skill's front matter (also GET /bootstrap/SKILL.md).
func SkillMarkdown(guide []byte) []byte {
	return append([]byte(skillFrontMatter), guide...)
}

func (r *resources) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	var text string
	switch uri {
	case SkillURI:
		text = string(r.guide)
	case SkillDir + "SKILL.md":
		text = string(SkillMarkdown(r.guide))
	case SkillDir + "references/tools.md":
		text = r.toolsReference()
	default:
		return nil, mcp.ResourceNotFoundError(uri)
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

// readKB reads oml://kb/{workarea}/{path}: the knowledge base holds no
// page yet, so a well-formed URI is resource-not-found, a malformed one
// invalid params.
func (r *resources) readKB(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if _, _, err := ParseKBURI(req.Params.URI); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return nil, mcp.ResourceNotFoundError(req.Params.URI)
}

// kbURIError is a URI under oml://kb/ that names no page.
type kbURIError string

func (e kbURIError) Error() string { return string(e) }

// ParseKBURI splits oml://kb/{workarea}/{path} into the workarea and the
// page's path under /fs/, each segment percent-decoded.
func ParseKBURI(uri string) (workarea, path string, err error) {
	rest, ok := strings.CutPrefix(uri, kbPrefix)
	if !ok {
		return "", "", kbURIError("not a knowledge base URI: want " + KBTemplate)
	}
	ws, p, ok := strings.Cut(rest, "/")
	if !ok || ws == "" || p == "" {
		return "", "", kbURIError("a knowledge base URI names a workarea and a page: " + KBTemplate)
	}
	if workarea, err = url.PathUnescape(ws); err != nil || strings.Contains(workarea, "/") {
		return "", "", kbURIError("the workarea segment is not percent-encoded correctly")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil || d == "" || d == "." || d == ".." || strings.Contains(d, "/") {
			return "", "", kbURIError("each path segment is one percent-encoded name (no empty, . or .. segment)")
		}
		segs[i] = d
	}
	return workarea, "/fs/" + strings.Join(segs, "/"), nil
}

// list serves resources/list (and every read under oml://kb/): the bootstrap and the skill first, then the
// knowledge base's pages (none yet), resourcesPage at a time; a page's
// nextCursor is the URI of its last resource, and a cursor that is not a
// URI this listing gave is invalid params.
func (r *resources) list(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// Every oml://kb/ read is answered here, whether or not the SDK's
		// template matcher would take the URI: one answer per URI.
		if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && method == "resources/read" && p != nil && strings.HasPrefix(p.URI, kbPrefix) {
			return r.readKB(ctx, &mcp.ReadResourceRequest{Params: p})
		}
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		all := []*mcp.Resource{{URI: SkillURI, Name: "oml-bootstrap", Title: "OML bootstrap", MIMEType: "text/markdown"}}
		for _, f := range skillFiles {
			all = append(all, &mcp.Resource{URI: SkillDir + f, Name: "oml-skill-" + strings.TrimSuffix(strings.ReplaceAll(f, "/", "-"), ".md"),
				Title: "OML skill: " + f, MIMEType: "text/markdown"})
		}
		start := 0
		if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
			i := slices.IndexFunc(all, func(x *mcp.Resource) bool { return x.URI == p.Cursor })
			if i < 0 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cursor: not one this listing gave (a nextCursor is the URI of a page's last resource)"}
			}
			start = i + 1
		}
		end := min(start+resourcesPage, len(all))
		// Private: once pages are listed, the list is the caller's own.
		out := &mcp.ListResourcesResult{Resources: all[start:end], Cacheable: mcp.Cacheable{CacheScope: "private"}}
		if end < len(all) {
			out.NextCursor = all[end-1].URI
		}
		return out, nil
	}
}
