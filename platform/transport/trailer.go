package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Trailer is a member a module adds to every successful tool result (the
// inbox's notifications): Read says what to add for the caller, nil when
// nothing. The transport only merges it into the body and mirrors it
// under _meta; what is pending, and that reading it delivers it, are the
// module's rules.
type Trailer struct {
	// Member is the top-level name the value is added under.
	Member string
	// Schema is the value's schema, admitted as an optional property of
	// every tool's success branch.
	Schema *jsonschema.Schema
	// Read returns the value for the caller of ctx, or nil for none. An
	// error leaves the result without the member.
	Read func(ctx context.Context) (json.RawMessage, error)
}

// admit admits the trailer's member in a success schema.
// It reports false when the schema cannot take it (then the tool's
// results never carry it).
func (tr *Trailer) admit(success *jsonschema.Schema) bool {
	if tr == nil || tr.Member == "" || tr.Schema == nil || tr.Read == nil || success.Type != "object" {
		return false
	}
	if success.Properties == nil {
		success.Properties = map[string]*jsonschema.Schema{}
	}
	if _, taken := success.Properties[tr.Member]; taken {
		return false
	}
	success.Properties[tr.Member] = tr.Schema
	if success.PropertyOrder != nil {
		success.PropertyOrder = append(success.PropertyOrder, tr.Member)
	}
	return true
}

// applyTrailer adds the trailer to a successful result's body and _meta.
func (t *Tools) applyTrailer(ctx context.Context, tool string, res *mcp.CallToolResult, body []byte) []byte {
	tr := t.trailer
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return body
	}
	v, err := tr.Read(ctx)
	if err != nil {
		t.log.ErrorContext(ctx, "tool trailer failed", "tool", tool, "request_id", RequestID(ctx), "error", err)
		return body
	}
	if len(v) == 0 {
		return body
	}
	name, _ := json.Marshal(tr.Member)
	var b bytes.Buffer
	b.Grow(len(body) + len(name) + len(v) + 2)
	b.Write(body[:len(body)-1])
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		b.WriteByte(',')
	}
	b.Write(name)
	b.WriteByte(':')
	b.Write(v)
	b.WriteByte('}')
	res.Meta = mcp.Meta{tr.Member: v}
	return b.Bytes()
}

// NewTrailer builds a Trailer whose value is a T, its schema derived as
// tool output schemas are; read reports ok false when there is nothing to
// add.
func NewTrailer[T any](member string, read func(ctx context.Context) (v T, ok bool, err error)) (*Trailer, error) {
	schema, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	plain(schema, true)
	fill := holdsSlice(reflect.TypeFor[T](), map[reflect.Type]bool{})
	return &Trailer{Member: member, Schema: schema, Read: func(ctx context.Context) (json.RawMessage, error) {
		v, ok, err := read(ctx)
		if err != nil || !ok {
			return nil, err
		}
		if fill {
			fillNilSlices(reflect.ValueOf(&v).Elem())
		}
		return json.Marshal(v)
	}}, nil
}
