package transport_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

type inner struct {
	Depth int `json:"depth"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type decodeTarget struct {
	Embedded
	Name  string            `json:"name"`
	List  []inner           `json:"list,omitempty"`
	Map   map[string]inner  `json:"map,omitempty"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
	Any   any               `json:"any,omitempty"`
	When  *time.Time        `json:"when,omitempty"`
	Ptr   *inner            `json:"ptr,omitempty"`
	Skip  string            `json:"-"`
	Plain string            // no tag: its Go name, exactly
	Extra map[string]string `json:"extra,omitempty"`
}

type withTenant struct {
	Tenant string `json:"tenant"`
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name string
		body string
		dst  any
		want string // dst re-encoded
	}{
		{"tenant is ignored", `{"name":"a","tenant":"globex"}`, &echoIn{}, `{"name":"a"}`},
		{"tenant_id is ignored", `{"name":"a","tenant_id":"tn_x","tenant":{"deep":[1]}}`, &echoIn{}, `{"name":"a"}`},
		{"a declared tenant is kept", `{"tenant":"acme"}`, &withTenant{}, `{"tenant":"acme"}`},
		{"embedded, nested and opaque fields", `{"shared":"s","name":"n","list":[{"depth":1}],"map":{"ANY KEY":{"depth":2}},` +
			`"raw":{"Whatever":1},"any":{"X":null},"when":"2026-01-02T03:04:05Z","ptr":{"depth":3},"Plain":"p","extra":{"k":"v"}}`,
			&decodeTarget{}, ""},
		{"unicode that is not NUL", `{"name":"a\u0001é\ud83d\ude00"}`, &echoIn{}, `{"name":"a\u0001é😀"}`},
	}
	for _, c := range ok {
		if err := transport.DecodeJSON([]byte(c.body), c.dst); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.want != "" {
			if got, _ := json.Marshal(c.dst); string(got) != c.want {
				t.Fatalf("%s: decoded %s, want %s", c.name, got, c.want)
			}
		}
	}
	refused := []struct {
		name, body, inMessage string
	}{
		{"NUL in a string", `{"name":"a\u0000"}`, `"name"`},
		{"NUL in a nested string", `{"list":[{"depth":1},{"x":"\u0000"}]}`, `"list[1].x"`},
		{"NUL in a field name", `{"na\u0000me":"a"}`, `"na\x00me"`},
		{"NUL in a dropped-looking key", `{"tenant\u0000":"a"}`, "NUL"},
		{"NUL in an opaque value", `{"raw":{"k":"\u0000"}}`, `"raw.k"`},
		{"case-folded name", `{"NAME":"a"}`, `did you mean "name"`},
		{"case-folded nested name", `{"ptr":{"Depth":1}}`, `"ptr.Depth"`},
		{"case-folded untagged name", `{"plain":"p"}`, `"plain"`},
		{"unknown nested field", `{"list":[{"depth":1,"boss":2}]}`, `"list[0].boss"`},
		{"unknown field in a map value", `{"map":{"k":{"boss":1}}}`, `"map.k.boss"`},
		{"skipped field", `{"Skip":"x"}`, `"Skip"`},
		{"tenant under another name", `{"Tenant":"x"}`, `"Tenant"`},
		{"nested tenant stays unknown", `{"ptr":{"tenant":"x"}}`, `"ptr.tenant"`},
		{"wrong type", `{"list":[{"depth":"deep"}]}`, `"list.depth"`},
		{"not UTF-8", "{\"name\":\"\xff\"}", "UTF-8"},
		{"trailing data", `{"name":"a"} ]`, "after"},
		{"trailing garbage", `{"name":"a"} x`, "more than one"},
		{"two values", `{"name":"a"}{}`, "more than one"},
		{"malformed", `{"name":`, "malformed"},
		{"not an object", `"name"`, "object"},
	}
	if err := transport.DecodeNested([]byte(`{"depth":1,"tenant":"x"}`), &inner{}); !errs.Is(err, errs.Validation) {
		t.Fatalf("a tenant inside a body decoded on its own: %v", err)
	}
	for _, c := range refused {
		err := transport.DecodeJSON([]byte(c.body), &decodeTarget{})
		if !errs.Is(err, errs.Validation) || !strings.Contains(err.Error(), c.inMessage) {
			t.Fatalf("%s: got %v, want request.validation naming %s", c.name, err, c.inMessage)
		}
	}
}
