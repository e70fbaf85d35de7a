// Package web serves the pages reviewers and the human in the loop work
// in: sign-in, the review queue and the serve ceremony, the inbox and the
// workarea overview. Pages are server-rendered html/template files and a
// little hand-written CSS and JavaScript, all embedded in the binary; a
// page makes no request to any other origin.
//
// The pages hold no rule of their own. They sign a browser in as one key
// (a web session: the access context stores it hashed, expiring and
// revocable) and then call the same HTTP API a bearer-key client calls, in
// process (transport.Pages, transport.AsCaller): a refusal there is the
// refusal shown here, in words and with its code.
//
// Security: the session cookie is HttpOnly, SameSite=Strict and Secure
// (__Host-) behind https; every state-changing form carries a CSRF token
// derived from the session, and a POST from another origin is refused
// before it; every page sends a strict Content-Security-Policy, nosniff,
// a same-origin-only Referrer-Policy and frame denial.
package web
