package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzPDF: the PDF extractor, sandboxed as the server runs it, takes any
// bytes a writer uploads as application/pdf and returns bounded valid
// UTF-8 text or a note; a malformed file never takes the process down.
// (Run in process, the parser recursed without end on a cyclic page
// tree, found by this target: TestCyclicPageTree.)
func FuzzPDF(f *testing.F) {
	if pdf, err := os.ReadFile("../../../../e2e/testdata/quote.pdf"); err == nil {
		f.Add(pdf)
		f.Add(pdf[:len(pdf)/2])
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	f.Add([]byte("%PDF-1.7\nxref\n0 1\n0000000000 65535 f \ntrailer<</Size 1>>\nstartxref\n9\n%%EOF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// A parser that loops is killed sooner than the server's 10 s
		// (the cyclic page tree is TestCyclicPageTree's, not a seed: its
		// mutations loop, and would hold the fuzzer at this bound).
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		m := From(ctx, "application/pdf", bytes.NewReader(data), int64(len(data)), sandbox)
		if len(m.Text) > MaxText || !utf8.ValidString(m.Text) {
			t.Fatalf("%d bytes of text (valid UTF-8: %v)", len(m.Text), utf8.ValidString(m.Text))
		}
	})
}

// FuzzText: the text extractors keep valid UTF-8 within the bound, for
// any bytes and any media type.
func FuzzText(f *testing.F) {
	f.Add("text/plain; charset=utf-8", []byte("hello"))
	f.Add("application/json", []byte("{\"a\":\"\xff\"}"))
	f.Add("text/csv;;", []byte("\xe2\x82"))
	f.Add("application/x-unknown", []byte("x"))
	f.Fuzz(func(t *testing.T, mediaType string, data []byte) {
		m := From(context.Background(), mediaType, bytes.NewReader(data), int64(len(data)), sandbox)
		if len(m.Text) > MaxText || !utf8.ValidString(m.Text) {
			t.Fatalf("%s: %d bytes of text (valid UTF-8: %v)", mediaType, len(m.Text), utf8.ValidString(m.Text))
		}
	})
}

// sandbox is the child process the server uses, played by this test
// binary (TestMain).
var sandbox = Subprocess([]string{ChildEnv + "=1"}, os.Args[0])

func TestMain(m *testing.M) {
	MaybeChild()
	os.Exit(m.Run())
}

// cyclicPDF is a PDF whose page tree is its own child.
func cyclicPDF() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := []int{b.Len()}
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	offs = append(offs, b.Len())
	b.WriteString("2 0 obj\n<< /Type /Pages /Kids [2 0 R] /Count 1 >>\nendobj\n")
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 3\n0000000000 65535 f \n%010d 00000 n \n%010d 00000 n \n", offs[0], offs[1])
	fmt.Fprintf(&b, "trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", x)
	return b.Bytes()
}

// TestCyclicPageTree: a PDF whose page tree contains itself made the
// parser recurse until the stack overflowed, a fatal error no recover
// catches: one upload, once served to a reviewer, stopped the replica.
// In the sandbox the child dies (or is killed at the timeout) and the
// reviewer gets a note; this process goes on, with no goroutine left.
func TestCyclicPageTree(t *testing.T) {
	before := runtime.NumGoroutine()
	data := cyclicPDF()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	m := From(ctx, "application/pdf", bytes.NewReader(data), int64(len(data)), sandbox)
	if m.Kind != KindOpaque || !strings.Contains(m.Note, "PDF text extraction") {
		t.Fatalf("cyclic page tree: %+v", m)
	}
	time.Sleep(100 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before, %d after", before, after)
	}
	t.Logf("note: %s", m.Note)
}
