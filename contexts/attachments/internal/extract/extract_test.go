package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// minimalPDF builds a one-page PDF showing text, with a correct xref.
func minimalPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func TestExtract(t *testing.T) {
	for _, c := range []struct {
		media, body string
		kind        string
		want        string
	}{
		{"text/plain; charset=utf-8", "quote valid until 2026-11-15", KindText, "quote valid until"},
		{"text/markdown", "# Quote\n412 USD/t", KindText, "412 USD/t"},
		{"application/json", `{"price": 412}`, KindText, `"price"`},
		{"text/csv", "supplier,price\nAccra,412", KindText, "Accra,412"},
		{"text/plain", "\xff\xfe not utf-8", KindOpaque, ""},
		{"image/png", "\x89PNG...", KindOpaque, ""},
		{"application/pdf", string(minimalPDF("Accra Metals quote")), KindPDF, "Accra Metals quote"},
		{"application/pdf", "%PDF-1.4 garbage", KindOpaque, ""},
	} {
		m := From(context.Background(), c.media, strings.NewReader(c.body), int64(len(c.body)), sandbox)
		if m.Kind != c.kind || !strings.Contains(m.Text, c.want) {
			t.Errorf("%s: %+v, want kind %s containing %q", c.media, m, c.kind, c.want)
		}
		if m.Kind == KindOpaque && m.Note == "" {
			t.Errorf("%s: opaque without a note", c.media)
		}
	}
	long := strings.Repeat("é", MaxText) // two bytes each: the cut lands mid-character
	m := From(context.Background(), "text/plain", strings.NewReader(long), int64(len(long)), sandbox)
	if m.Kind != KindText || !m.Truncated || len(m.Text) > MaxText || !strings.HasPrefix(long, m.Text) {
		t.Fatalf("truncation: kind %s truncated %v len %d", m.Kind, m.Truncated, len(m.Text))
	}
}
