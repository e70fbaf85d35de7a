package transport

import (
	"net/http"
	"time"
)

// Server timeouts (cmd/oml-server sets them on its http.Server). Every
// request is bounded in time as well as size: a header must arrive within
// ReadHeaderTimeout, the body within ReadTimeout and the answer be written
// within WriteTimeout, both counted from the request's start. net/http
// also cancels a request's context when its read deadline passes, body
// read or not, so ReadTimeout bounds the whole request: both leave room
// for the longest long-poll (60 s). The routes that stream large bodies
// (an upload part, a download, the evidence export) extend both to
// StreamTimeout with [ExtendDeadlines].
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 90 * time.Second
	WriteTimeout      = 90 * time.Second
	IdleTimeout       = 2 * time.Minute
	StreamTimeout     = 10 * time.Minute
	// MaxHeaderBytes bounds a request's header block (Go answers 431
	// beyond it); MaxHeaderCount bounds how many fields it may hold.
	MaxHeaderBytes = 64 << 10
	MaxHeaderCount = 100
)

// ExtendDeadlines moves the request's read and write deadlines to read
// and write from now (0 leaves one as it is). It is for the routes that
// stream: an upload part, a download, an export. Behind a writer that
// cannot set deadlines (an in-process call) it does nothing.
func ExtendDeadlines(w http.ResponseWriter, read, write time.Duration) {
	rc := http.NewResponseController(w)
	if read > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(read))
	}
	if write > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(write))
	}
}
