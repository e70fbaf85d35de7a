package transport

import (
	"net/http/httptest"
	"testing"

	"github.com/omlhub/oml/platform/errs"
)

func TestQuery(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/grants?key_id=k&limit=5", nil)
	q, err := Query(r, "key_id", "workarea", "limit")
	if err != nil || q["key_id"] != "k" || q["workarea"] != "" {
		t.Fatalf("Query = %v, %v", q, err)
	}
	if n, err := QueryInt(q, "limit"); err != nil || n != 5 {
		t.Fatalf("QueryInt = %d, %v", n, err)
	}
	if n, err := QueryInt(q, "workarea"); err != nil || n != 0 {
		t.Fatalf("absent QueryInt = %d, %v", n, err)
	}
	for _, target := range []string{"/v1/grants?key=k", "/v1/grants?key_id=a&key_id=b"} {
		if _, err := Query(httptest.NewRequest("GET", target, nil), "key_id"); !errs.Is(err, errs.Validation) {
			t.Errorf("%s: %v", target, err)
		}
	}
	if _, err := QueryInt(map[string]string{"limit": "x"}, "limit"); !errs.Is(err, errs.Validation) {
		t.Errorf("a non-integer: %v", err)
	}
}
