package transport

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/omlhub/oml/platform/errs"
)

// encoding/json matches object keys to struct fields case-insensitively,
// so {"QUERY": …} would fill Query. checkFields holds field names to their
// exact spelling; the typed decode that follows still checks the types.

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	fieldCache      sync.Map // reflect.Type → map[string]reflect.Type
)

// typeOf is the type a decode into dst fills: dst's, pointers removed.
func typeOf(dst any) reflect.Type {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// opaque reports whether values of t decode themselves or take any JSON
// (json.RawMessage, time.Time, any), so the walk stops there.
func opaque(t reflect.Type) bool {
	if t == nil || t.Kind() == reflect.Interface {
		return true
	}
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || p.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || p.Implements(textUnmarshaler)
}

// checkFields walks a generic tree along t and refuses any object key that
// is not the exact JSON name of a field of the struct it lands in.
func checkFields(v any, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, the typed decode's to report
		}
		fields := fieldsOf(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			p := joinPath(path, k)
			ft, ok := fields[k]
			if !ok {
				return unknownField(p, k, fields)
			}
			if err := checkFields(obj[k], ft, p); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := checkFields(obj[k], t.Elem(), joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range arr {
			if err := checkFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func unknownField(path, key string, fields map[string]reflect.Type) error {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return errs.Invalid("unknown field %q (field names match exactly: did you mean %q?)", path, name)
		}
	}
	return errs.Invalid("unknown field %q", path)
}

// fieldsOf maps the JSON names of t's fields to their types, as
// encoding/json sees them: json tags, "-" skipped, unexported fields
// skipped, embedded structs' fields promoted (the shallower one wins). A
// non-struct has none.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	seen := map[reflect.Type]bool{t: true}
	for level := []reflect.Type{t}; len(level) > 0; {
		var next []reflect.Type
		found := map[string]reflect.Type{}
		for _, st := range level {
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					if !seen[ft] {
						seen[ft] = true
						next = append(next, ft)
					}
					continue
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, ok := fields[name]; ok {
					continue // a shallower field of that name wins
				}
				if _, ok := found[name]; !ok {
					found[name] = f.Type
				}
			}
		}
		maps.Copy(fields, found)
		level = next
	}
	fieldCache.Store(t, fields)
	return fields
}
