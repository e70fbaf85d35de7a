package transport

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
)

type schemaIn struct {
	Name  string   `json:"name"`
	Roots []string `json:"roots,omitempty"`
	Limit *int     `json:"limit,omitempty"`
}

type schemaItem struct {
	Tags []string   `json:"tags"`
	At   *time.Time `json:"at"`
}

type schemaOut struct {
	Items  []schemaItem    `json:"items"`
	Cursor *string         `json:"cursor"`
	Raw    json.RawMessage `json:"raw,omitempty"`
}

func TestToolSchemasArePlain(t *testing.T) {
	t.Parallel()
	in, out, err := toolSchemas[schemaIn, schemaOut]()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]any{"input": in, "output": out} {
		b, _ := json.Marshal(s)
		if strings.Contains(string(b), `"type":[`) {
			t.Errorf("%s schema has a type array: %s", name, b)
		}
	}
	if in.Properties["roots"].Type != "array" || in.Properties["limit"].Type != "integer" {
		t.Errorf("input: %+v %+v", in.Properties["roots"], in.Properties["limit"])
	}
	if in.Required[0] != "name" || len(in.Required) != 1 {
		t.Errorf("input required %v", in.Required)
	}
	if out.Type != "object" || len(out.AnyOf) != 2 {
		t.Fatalf("output is not object + anyOf [success, refusal]: %+v", out)
	}
	success, refusal := out.AnyOf[0], out.AnyOf[1]
	if success.Properties["items"].Type != "array" || success.Properties["items"].Items.Properties["tags"].Type != "array" {
		t.Errorf("output slices are not plain arrays")
	}
	cursor := success.Properties["cursor"]
	if len(cursor.AnyOf) != 2 || cursor.AnyOf[0].Type != "string" || cursor.AnyOf[1].Type != "null" {
		t.Errorf("output pointer is not anyOf [string, null]: %+v", cursor)
	}
	if _, ok := refusal.Properties["error"]; !ok || refusal.Required[0] != "error" {
		t.Errorf("refusal branch: %+v", refusal)
	}
}

func TestMissingRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, args string
		want       string
	}{
		{"present", `{"a": "x", "b": 1}`, ""},
		{"absent", `{"b": 1}`, `field "a" is required`},
		{"null", `{"a": null, "b": 1}`, `field "a" is required`},
		{"empty string is present", `{"a": "", "b": 0}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := missingRequired([]byte(tc.args), []string{"a", "b"})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e := errs.From(err)
			if e == nil || e.Code != errs.Validation || e.Message != tc.want {
				t.Fatalf("got %v, want request.validation %q", err, tc.want)
			}
		})
	}
}

func TestFillNilSlices(t *testing.T) {
	t.Parallel()
	if !holdsSlice(reflect.TypeFor[schemaOut](), map[reflect.Type]bool{}) ||
		holdsSlice(reflect.TypeFor[struct{ A *string }](), map[reflect.Type]bool{}) {
		t.Fatal("holdsSlice")
	}
	out := schemaOut{Items: []schemaItem{{}}}
	fillNilSlices(reflect.ValueOf(&out).Elem())
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":[{"tags":[],"at":null}],"cursor":null}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
