package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/errs"
)

// Decode reads r's body as one strict JSON object into dst: unknown
// fields, wrong types, trailing data and oversized bodies are typed
// refusals (request.validation, limit.size). See [DecodeJSON].
func Decode(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return DecodeJSON(body, dst)
}

// readBody reads a whole body; one over the server's bound is limit.size.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, bodyTooLarge(tooBig.Limit)
		}
		return nil, errs.Invalid("could not read the request body: %v", err)
	}
	return body, nil
}

// DecodeOptional is [Decode] for a body that may be left out: an empty
// body (with or without a Content-Length) leaves dst as it is.
func DecodeOptional(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return DecodeJSON(body, dst)
}

// tenantFields are dropped from the top level of a body: the key decides
// the tenant (D6), and seed 000 says a tenant named in a body is "ignored
// in favor of the key's", not refused.
var tenantFields = []string{"tenant", "tenant_id"}

// DecodeJSON is [Decode] on bytes: a whole body, or a tool's arguments.
// Beyond encoding/json it refuses, as request.validation naming the field,
// what would otherwise reach Postgres as a 500 or be accepted by accident:
// a body that is not UTF-8, U+0000 in any string or field name (Postgres
// text cannot hold it), and a field name that matches only when case is
// folded ({"QUERY": …} is not "query"). A top-level "tenant" or
// "tenant_id" is dropped unless dst declares it.
func DecodeJSON(data []byte, dst any) error { return decodeObject(data, dst, true) }

// DecodeNested decodes an object that sat inside a body as a
// json.RawMessage, as strictly as [DecodeJSON]; a tenant field there is an
// unknown field like any other, since only a body's top level names D6's
// ignored tenant.
func DecodeNested(data []byte, dst any) error { return decodeObject(data, dst, false) }

func decodeObject(data []byte, dst any, topLevel bool) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errs.Invalid("empty body: send a JSON object")
	}
	if data[0] != '{' {
		return errs.Invalid("the body must be a JSON object")
	}
	if !utf8.Valid(data) {
		// encoding/json would quietly turn such bytes into U+FFFD.
		return errs.Invalid("the body is not valid UTF-8")
	}
	tree, err := parseObject(data)
	if err != nil {
		return err
	}
	if topLevel && dropTenant(tree, dst) {
		if data, err = json.Marshal(tree); err != nil {
			return errs.Wrap(err, "re-encode a body without its tenant field")
		}
	}
	if err := refuseNUL(tree, ""); err != nil {
		return err
	}
	if err := checkFields(tree, typeOf(dst), ""); err != nil {
		return err
	}
	// The tree passed; the typed decode still catches wrong types, and
	// DisallowUnknownFields backs up checkFields.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	return nil
}

// parseObject decodes data into a generic tree (numbers kept as text), so
// that syntax errors and trailing data are found before any typed work.
func parseObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, decodeError(err)
	}
	if dec.More() {
		return nil, errs.Invalid("the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errs.Invalid("the body holds data after the JSON object")
	}
	return tree, nil
}

// dropTenant deletes the tenant fields dst does not declare and reports
// whether it deleted any.
func dropTenant(tree map[string]any, dst any) bool {
	declared := fieldsOf(typeOf(dst))
	dropped := false
	for _, k := range tenantFields {
		if _, ok := tree[k]; !ok {
			continue
		}
		if _, ok := declared[k]; ok {
			continue
		}
		delete(tree, k)
		dropped = true
	}
	return dropped
}

// refuseNUL walks a generic tree and refuses U+0000 in any string or
// object key, naming the field.
func refuseNUL(v any, path string) error {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return errs.Invalid("field %q: NUL (U+0000) is not allowed in a string", orRoot(path))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := joinPath(path, k)
			if strings.IndexByte(k, 0) >= 0 {
				return errs.Invalid("field name %q: NUL (U+0000) is not allowed", p)
			}
			if err := refuseNUL(v[k], p); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := refuseNUL(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return errs.Invalid("malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		return errs.Invalid("field %q: want %s, got JSON %s", orRoot(typ.Field), typeName(typ.Type.String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Invalid("malformed JSON: unexpected end of input")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errs.Invalid("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return errs.Invalid("malformed JSON: %v", err)
}

func typeName(goType string) string {
	switch {
	case goType == "string" || goType == "*string":
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "an object"
	}
	return goType
}

// RawBody reads a request body that is not JSON (a page's bytes), within
// the route's bound: over it is limit.size.
func RawBody(r *http.Request) ([]byte, error) { return readBody(r) }
