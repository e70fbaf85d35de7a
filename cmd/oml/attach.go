package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// uploadSession is the server's view of an upload session.
type uploadSession struct {
	UploadSession  string    `json:"upload_session"`
	State          string    `json:"state"`
	MediaType      string    `json:"media_type"`
	SizeBytes      int64     `json:"size_bytes"`
	ExpectedDigest string    `json:"expected_digest"`
	PartSizeBytes  int64     `json:"part_size_bytes"`
	PartsExpected  int       `json:"parts_expected"`
	PartsReceived  int       `json:"parts_received"`
	BytesReceived  int64     `json:"bytes_received"`
	NextPart       *int      `json:"next_part"`
	UploadPath     string    `json:"upload_path"`
	ExpiresAt      time.Time `json:"expires_at"`
	Reason         string    `json:"reason,omitempty"`
}

// attachState remembers which session carries which file, so that running
// the same command again after a crash or Ctrl-C resumes it.
type attachState struct {
	URL     string `json:"url"`
	Digest  string `json:"digest"`
	Size    int64  `json:"size"`
	Session string `json:"upload_session"`
}

// attach uploads FILE as an attachment: it hashes the file, opens (or
// resumes) an upload session and PUTs the parts in order, showing
// progress on stderr.
func (c *cli) attach(ctx context.Context, args []string) error {
	fs := c.flags("attach", "FILE [--media-type T] [--part-size BYTES] [--limit-rate BYTES_PER_SECOND] [--no-progress]")
	mediaType := fs.String("media-type", "", "the file's media type (default: from its extension or contents)")
	partSize := fs.Int64("part-size", 0, "part size in bytes: a multiple of 65536 from 5 MiB to 64 MiB (default: the server's, 8 MiB)")
	limitRate := fs.Int64("limit-rate", 0, "send at most this many bytes per second (0: no limit)")
	noProgress := fs.Bool("no-progress", false, "do not draw the progress bar")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	api, err := c.api()
	if err != nil {
		return err
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("attach: %s is not a regular file", pos[0])
	}
	digest, err := fileDigest(f)
	if err != nil {
		return fmt.Errorf("attach: hash %s: %w", pos[0], err)
	}
	if *mediaType == "" {
		*mediaType = guessMediaType(f, pos[0])
	}
	statePath := attachStatePath(api.base, digest, st.Size())
	ses, resumed, err := c.resumeOrOpen(ctx, api, statePath, attachState{URL: api.base, Digest: digest, Size: st.Size()},
		map[string]any{"media_type": *mediaType, "size_bytes": st.Size(), "expected_digest": digest, "part_size_bytes": *partSize})
	if err != nil {
		return err
	}
	if resumed && ses.NextPart != nil {
		fmt.Fprintf(c.stderr, "resuming upload session %s at part %d of %d\n", ses.UploadSession, *ses.NextPart, ses.PartsExpected)
	}
	bar := newProgress(c.stderr, st.Size(), ses.BytesReceived, *noProgress)
	for ses.State == "open" && ses.NextPart != nil {
		next, err := c.putPart(ctx, api, f, ses, *ses.NextPart, bar, *limitRate)
		if err != nil {
			bar.done()
			if ctx.Err() != nil {
				return fmt.Errorf("attach: interrupted; run the same command again to resume upload session %s", ses.UploadSession)
			}
			return err
		}
		ses = next
	}
	bar.done()
	if ses.State != "complete" {
		return fmt.Errorf("attach: upload session %s is %s: %s", ses.UploadSession, ses.State, ses.Reason)
	}
	_ = os.Remove(statePath)
	if c.json {
		return json.NewEncoder(c.stdout).Encode(ses)
	}
	fmt.Fprintf(c.stdout, "complete: upload session %s (%s, %s, %s)\nreference it from oml_remember: \"attachments\": [{\"upload_session\": %q}]\n",
		ses.UploadSession, ses.MediaType, humanBytes(ses.SizeBytes), ses.ExpectedDigest, ses.UploadSession)
	return nil
}

// resumeOrOpen continues the session recorded for this file when the
// server still has it open (or complete), else opens a new one.
func (c *cli) resumeOrOpen(ctx context.Context, api *client, statePath string, want attachState, open map[string]any) (uploadSession, bool, error) {
	var ses uploadSession
	if data, err := os.ReadFile(statePath); err == nil {
		var st attachState
		if json.Unmarshal(data, &st) == nil && st.URL == want.URL && st.Digest == want.Digest && st.Size == want.Size && st.Session != "" {
			err := api.do(ctx, http.MethodGet, "/v1/attachments/uploads/"+st.Session, nil, &ses)
			if err == nil && (ses.State == "open" || ses.State == "complete") {
				return ses, true, nil
			}
			var apiErr *APIError
			if err != nil && !errors.As(err, &apiErr) {
				return ses, false, err // the server is unreachable: keep the state for the next run
			}
		}
	}
	if open["part_size_bytes"] == int64(0) {
		delete(open, "part_size_bytes")
	}
	if err := api.do(ctx, http.MethodPost, "/v1/attachments/uploads", open, &ses); err != nil {
		return ses, false, err
	}
	want.Session = ses.UploadSession
	if err := os.MkdirAll(filepath.Dir(statePath), 0o700); err == nil {
		data, _ := json.Marshal(want)
		_ = os.WriteFile(statePath, data, 0o600)
	}
	return ses, false, nil
}

// putPart sends part n, retrying what the server calls retryable and
// re-reading the session when the part does not fit its progress.
func (c *cli) putPart(ctx context.Context, api *client, f *os.File, ses uploadSession, n int, bar *progress, rate int64) (uploadSession, error) {
	off := int64(n-1) * ses.PartSizeBytes
	length := min(ses.PartSizeBytes, ses.SizeBytes-off)
	body := make([]byte, length)
	if _, err := f.ReadAt(body, off); err != nil && !(errors.Is(err, io.EOF) && int64(len(body)) == length) {
		return ses, fmt.Errorf("attach: read part %d: %w", n, err)
	}
	sum := sha256.Sum256(body)
	path := "/v1/attachments/uploads/" + ses.UploadSession + "/parts/" + strconv.Itoa(n)
	var lastErr error
	for attempt := 0; attempt < 6; attempt++ {
		if attempt > 0 {
			wait := time.Duration(1<<min(attempt, 4)) * 250 * time.Millisecond
			select {
			case <-ctx.Done():
				return ses, ctx.Err()
			case <-time.After(wait):
			}
		}
		bar.rewind(off)
		next, err := api.putRaw(ctx, path, body, "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":", bar, rate)
		if err == nil {
			return next, nil
		}
		lastErr = err
		var apiErr *APIError
		switch {
		case ctx.Err() != nil:
			return ses, ctx.Err()
		case errors.As(err, &apiErr) && apiErr.Code == "upload.out_of_order":
			// Another run moved the session on: continue from where it is.
			var fresh uploadSession
			if err := api.do(ctx, http.MethodGet, "/v1/attachments/uploads/"+ses.UploadSession, nil, &fresh); err != nil {
				return ses, err
			}
			return fresh, nil
		case errors.As(err, &apiErr) && !apiErr.Retryable:
			return ses, err
		}
	}
	return ses, fmt.Errorf("attach: part %d failed after retries: %w", n, lastErr)
}

// putRaw PUTs a part body and decodes the session it returns.
func (c *client) putRaw(ctx context.Context, path string, body []byte, digest string, bar *progress, rate int64) (uploadSession, error) {
	var out uploadSession
	target := c.base + path
	r := &meteredReader{data: body, bar: bar, rate: rate, start: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, r)
	if err != nil {
		return out, err
	}
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(&meteredReader{data: body, bar: bar, rate: rate, start: time.Now()}), nil
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Content-Digest", digest)
	resp, err := c.http.Do(req)
	if err != nil {
		return out, fmt.Errorf("PUT %s: %w", target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return out, err
	}
	if resp.StatusCode != http.StatusOK {
		return out, responseError(http.MethodPut, target, resp, data)
	}
	return out, json.Unmarshal(data, &out)
}

// meteredReader feeds a part to the request, advancing the progress bar
// and holding the rate limit.
type meteredReader struct {
	data  []byte
	off   int
	bar   *progress
	rate  int64
	start time.Time
}

func (m *meteredReader) Read(p []byte) (int, error) {
	if m.off >= len(m.data) {
		return 0, io.EOF
	}
	if len(p) > 256<<10 {
		p = p[:256<<10]
	}
	if m.rate > 0 {
		// Sleep until the bytes sent so far fit the rate.
		due := m.start.Add(time.Duration(float64(m.off) / float64(m.rate) * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
	}
	n := copy(p, m.data[m.off:])
	m.off += n
	m.bar.add(int64(n))
	return n, nil
}

// fileDigest is "sha256:<hex>" of the file.
func fileDigest(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// guessMediaType names the file's type by its extension, else by its
// first bytes.
func guessMediaType(f *os.File, name string) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); t != "" {
		return t
	}
	head := make([]byte, 512)
	n, _ := f.ReadAt(head, 0)
	return http.DetectContentType(head[:n])
}

// attachStatePath is where the session carrying this file to this server
// is remembered.
func attachStatePath(base, digest string, size int64) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", base, digest, size)))
	return filepath.Join(dir, "oml", "uploads", hex.EncodeToString(sum[:16])+".json")
}

// progress draws "[####····] 12.0 MiB / 50.0 MiB  8.1 MiB/s  ETA 5s".
type progress struct {
	w        io.Writer
	total    int64
	sent     int64
	base     int64 // bytes already on the server when this run started
	start    time.Time
	lastDraw time.Time
	off      bool
}

func newProgress(w io.Writer, total, already int64, off bool) *progress {
	return &progress{w: w, total: total, sent: already, base: already, start: time.Now(), off: off}
}

// rewind sets the count back to the start of a part being (re)sent.
func (p *progress) rewind(to int64) { p.sent = to }

func (p *progress) add(n int64) {
	p.sent += n
	if time.Since(p.lastDraw) >= 100*time.Millisecond || p.sent == p.total {
		p.draw()
	}
}

func (p *progress) draw() {
	if p.off {
		return
	}
	p.lastDraw = time.Now()
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.sent) / float64(p.total)
	}
	filled := int(frac * width)
	elapsed := time.Since(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.sent-p.base) / elapsed
	}
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(p.total-p.sent) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s / %s  %s/s  ETA %s ", strings.Repeat("#", filled), strings.Repeat("·", width-filled),
		humanBytes(p.sent), humanBytes(p.total), humanBytes(int64(rate)), eta)
}

func (p *progress) done() {
	if p.off {
		return
	}
	p.draw()
	fmt.Fprintln(p.w)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
