package transport

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/omlhub/oml/platform/errs"
)

// toolSchemas derives a tool's input and output schemas from In and Out,
// in the plain spelling independent clients accept:
//
//   - no `type` arrays: jsonschema-go writes a Go slice or pointer as
//     ["null", T], which the Inspector's --strict flags as unportable
//     (single-type dialects such as Gemini's reject it). An input field
//     becomes T (absent is how a client leaves it out). An output slice
//     becomes "array" and is never sent as null ([fillNilSlices]); an
//     output pointer, whose null is part of the HTTP contract too (a
//     cursor at the end, a root's parent), becomes anyOf [T, null].
//   - the output schema admits the typed refusal: {"type": "object",
//     "anyOf": [Out, {"error": {...}}]}. A refusal is a result with
//     isError and the envelope as structured content (seed 000), and
//     clients that validate structured content (TypeScript SDK v1, the
//     Inspector) validate refusals too.
func toolSchemas[In, Out any]() (in, out *jsonschema.Schema, err error) {
	if in, err = jsonschema.For[In](nil); err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	plain(in, false)
	success, err := jsonschema.For[Out](nil)
	if err != nil {
		return nil, nil, fmt.Errorf("output schema: %w", err)
	}
	plain(success, true)
	refusal, err := jsonschema.For[errs.Envelope](nil)
	if err != nil {
		return nil, nil, fmt.Errorf("error envelope schema: %w", err)
	}
	refusal.Description = "a refusal (isError: true): OML's typed error, naming the rule that refused the call"
	return in, &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{success, refusal}}, nil
}

// plain rewrites s in place without nullable type arrays (see toolSchemas).
func plain(s *jsonschema.Schema, output bool) {
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		plain(p, output)
	}
	plain(s.Items, output)
	plain(s.AdditionalProperties, output)
	for _, sub := range s.AnyOf {
		plain(sub, output)
	}
	if len(s.Types) != 2 || !slices.Contains(s.Types, "null") {
		return
	}
	t := s.Types[0]
	if t == "null" {
		t = s.Types[1]
	}
	s.Types = nil
	if !output || t == "array" {
		s.Type = t
		return
	}
	branch := *s
	branch.Type, branch.Description = t, ""
	*s = jsonschema.Schema{Description: s.Description,
		AnyOf: []*jsonschema.Schema{&branch, {Type: "null"}}}
}

// missingRequired refuses arguments that lack a field the input schema
// requires (or send it as null), naming the field, before the tool's own
// checks would refuse the zero value with a less useful message.
func missingRequired(args []byte, required []string) error {
	if len(required) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil // DecodeJSON reports malformed arguments
	}
	for _, name := range required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			return errs.Invalid("field %q is required", name)
		}
	}
	return nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// holdsSlice reports whether values of t can contain a slice that
// encoding/json would write as null, so [fillNilSlices] need only run for
// such tools.
func holdsSlice(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] || t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice:
		return true
	case reflect.Pointer, reflect.Array:
		return holdsSlice(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsSlice(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// fillNilSlices replaces nil slices reachable from v with empty ones, so
// an output schema can say "array" and mean it. Values that encode
// themselves (json.RawMessage, time.Time) are left alone.
func fillNilSlices(v reflect.Value) {
	t := v.Type()
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillNilSlices(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				fillNilSlices(v.Field(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fillNilSlices(v.Index(i))
		}
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(t, 0, 0))
			}
			return
		}
		for i := range v.Len() {
			fillNilSlices(v.Index(i))
		}
	}
}
