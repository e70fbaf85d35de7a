// Package extract turns an attachment into what its reviewer reads: the
// text of plain text, markdown, JSON, CSV and PDF files, where a
// deterministic extractor exists. Anything else is opaque and reviewed by
// its provenance, digest, size and scan result.
package extract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Limits: the text shown to a reviewer, the largest PDF parsed, how many
// of its pages are read and for how long.
const (
	MaxText     = 64 << 10
	MaxPDF      = 32 << 20
	MaxPDFPages = 200
	PDFTimeout  = 10 * time.Second
)

// Kinds of review material.
const (
	KindText   = "text"
	KindPDF    = "pdf_text"
	KindOpaque = "opaque"
)

// Material is an attachment's review material.
type Material struct {
	Kind      string
	Text      string
	Truncated bool
	// Note says why there is no text (opaque type, failed extraction).
	Note string
}

// Textual reports whether a media type has a text extractor.
func Textual(mediaType string) bool {
	mt, _, _ := mime.ParseMediaType(mediaType)
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/csv", mt == "application/x-ndjson", mt == "application/pdf":
		return true
	}
	return false
}

// From extracts review material from an attachment's plaintext. A PDF is
// parsed by sandbox (nil: in this process, which only tests should do: a
// crafted PDF can make the parser recurse until the process dies).
func From(ctx context.Context, mediaType string, r io.ReaderAt, size int64, sandbox Sandbox) Material {
	mt, _, _ := mime.ParseMediaType(mediaType)
	if !Textual(mt) {
		return Material{Kind: KindOpaque, Note: fmt.Sprintf("no deterministic text extractor for %s", mt)}
	}
	if mt == "application/pdf" {
		return fromPDF(ctx, r, size, sandbox)
	}
	buf := make([]byte, min(size, MaxText))
	if _, err := r.ReadAt(buf, 0); err != nil && err != io.EOF {
		return unreadable
	}
	return text(KindText, buf, size > MaxText)
}

// text keeps valid UTF-8 only: a cut at the limit may split a character.
func text(kind string, b []byte, truncated bool) Material {
	for len(b) > 0 && !utf8.Valid(b) {
		_, n := utf8.DecodeLastRune(b)
		if n <= 0 || !truncated {
			return Material{Kind: KindOpaque, Note: "declared as text but is not valid UTF-8"}
		}
		b = b[:len(b)-n]
	}
	return Material{Kind: kind, Text: string(b), Truncated: truncated}
}

// unreadable is the material of an attachment the store did not give
// back; the store's error names objects and endpoints, not for the
// reviewer.
var unreadable = Material{Kind: KindOpaque, Note: "could not read the attachment"}

// fromPDF extracts a PDF's text page by page, stopping at MaxText,
// MaxPDFPages or PDFTimeout, and guarding against parser panics on
// hostile files.
func fromPDF(ctx context.Context, r io.ReaderAt, size int64, sandbox Sandbox) Material {
	if size > MaxPDF {
		return Material{Kind: KindOpaque, Note: fmt.Sprintf("PDF larger than %d MiB is not parsed", MaxPDF>>20)}
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
		return unreadable
	}
	if sandbox == nil {
		return inProcess(data)
	}
	ctx, cancel := context.WithTimeout(ctx, PDFTimeout)
	defer cancel()
	m, err := sandbox(ctx, data)
	if err != nil {
		if ctx.Err() != nil {
			return Material{Kind: KindOpaque, Note: "PDF text extraction took too long (at most " + PDFTimeout.String() + ")"}
		}
		// The child's error (its stderr: a stack trace, paths) is the
		// sandbox's to log; the reviewer reads a fixed note.
		return Material{Kind: KindOpaque, Note: "PDF text extraction failed: the parser stopped"}
	}
	if len(m.Text) > MaxText || !utf8.ValidString(m.Text) || len(m.Note) > 1024 || !utf8.ValidString(m.Note) ||
		m.Kind != KindPDF && m.Kind != KindOpaque {
		return Material{Kind: KindOpaque, Note: "PDF text extraction failed: the parser's answer is malformed"}
	}
	return m
}

// inProcess parses in this process, bounded in time; a parser that loops
// keeps its goroutine (tests only: the server uses a sandbox).
func inProcess(data []byte) Material {
	done := make(chan Material, 1)
	go func() { done <- PDFText(data) }()
	select {
	case m := <-done:
		return m
	case <-time.After(PDFTimeout):
		return Material{Kind: KindOpaque, Note: fmt.Sprintf("PDF text extraction took longer than %s", PDFTimeout)}
	}
}

// PDFText parses a PDF in this process: what the sandbox's child runs.
func PDFText(data []byte) Material { return pdfText(bytes.NewReader(data), int64(len(data))) }

func pdfText(r io.ReaderAt, size int64) (m Material) {
	defer func() {
		if p := recover(); p != nil {
			m = Material{Kind: KindOpaque, Note: fmt.Sprintf("PDF text extraction failed: %v", p)}
		}
	}()
	doc, err := pdf.NewReader(r, size)
	if err != nil {
		return Material{Kind: KindOpaque, Note: "not a readable PDF: " + err.Error()}
	}
	var out bytes.Buffer
	pages := doc.NumPage()
	truncated := pages > MaxPDFPages
	for i := 1; i <= min(pages, MaxPDFPages) && out.Len() <= MaxText; i++ {
		text, err := doc.Page(i).GetPlainText(nil)
		if err != nil {
			return Material{Kind: KindOpaque, Note: fmt.Sprintf("PDF text extraction failed on page %d: %v", i, err)}
		}
		out.WriteString(text)
	}
	b := out.Bytes()
	if len(b) > MaxText {
		b, truncated = b[:MaxText], true
	}
	return text(KindPDF, b, truncated)
}
