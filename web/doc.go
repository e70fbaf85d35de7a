// Package web will serve the reviewer pages (the serve ceremony) and the
// human's inbox: server-rendered with html/template, embedded, with CSRF
// protection. Empty until the admission and inbox contexts land.
package web
