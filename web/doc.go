// Package web is reserved for the reviewer and inbox pages (server-rendered
// with html/template, embedded, with CSRF protection). It holds no page yet:
// reviewers use the HTTP API's serve ceremony.
package web
