package ids

import "testing"

func TestNewHas(t *testing.T) {
	t.Parallel()
	id := New(Workarea)
	if !Has(Workarea, id) {
		t.Fatalf("Has(%q) = false", id)
	}
	for _, bad := range []string{"", "wa_", "key_" + Suffix(id), "wa_" + Suffix(id) + "X", "wa_not-a-ulid-not-a-ulid-xx"} {
		if Has(Workarea, bad) {
			t.Errorf("Has(%q) = true, want false", bad)
		}
	}
	if a, b := New(Key), New(Key); a == b {
		t.Fatal("two ids are equal")
	}
}
