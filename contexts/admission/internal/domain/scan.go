package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFindings bounds what Scan lists, so a hostile submission cannot bury
// its reviewer (or its claim row) in findings.
const MaxFindings = 50

// Finding is one thing the scanner saw in a submission's text.
//
// Unlike the rest of domain it carries JSON tags: findings are stored on
// the claim and shown to reviewers exactly as the scanner wrote them.
type Finding struct {
	Rule    string `json:"rule"`    // stable id, one of the Rule constants
	Message string `json:"message"` // human text; never the secret itself
	Offset  int    `json:"offset"`  // byte offset in the text
}

// The stable rule ids a Finding carries; workarea policies and reviewers
// key on them.
const (
	RuleAWSAccessKey  = "credential.aws_access_key"
	RuleAWSSecretKey  = "credential.aws_secret_key"
	RuleGitHubToken   = "credential.github_token"
	RuleSlackToken    = "credential.slack_token"
	RuleOpenAIKey     = "credential.openai_key"
	RuleGoogleAPIKey  = "credential.google_api_key"
	RuleStripeLiveKey = "credential.stripe_live_key"
	RuleOMLKey        = "credential.oml_key"
	RuleJWT           = "credential.jwt"
	RuleAssignment    = "credential.assignment" // password, secret, api key or token set to a literal
	RulePrivateKey    = "private_key.pem"
	RulePGPPrivateKey = "private_key.pgp"
	RuleControlC0     = "control.c0"         // C0 controls other than tab, LF, CR; and DEL
	RuleControlC1     = "control.c1"         // U+0080–U+009F
	RuleBidi          = "control.bidi"       // embeddings, overrides, isolates ("Trojan Source")
	RuleZeroWidth     = "control.zero_width" // U+200B–U+200D, U+FEFF past the start
	RuleTruncated     = "scan.truncated"
)

// Scan returns the findings in text, in order of offset: at most
// MaxFindings, then one finding with Rule RuleTruncated at the first one
// left out. A message names what was found and at most its public prefix
// ("ghp_…"), never the secret. Control characters are reported as runs:
// one finding per maximal sequence of adjacent characters under one rule.
//
// Scan makes one pass and does bounded work at each position, so it runs in
// time linear in len(text). It expects valid UTF-8 (Submission.Validate
// checks it); invalid bytes are skipped.
func Scan(text string) []Finding {
	s := scanner{text: text, next: make([]int, len(tokenRules))}
	s.scan()
	return s.out
}

type scanner struct {
	text     string
	out      []Finding
	done     bool
	credFrom int   // no credential starts before this: the end of the last one
	next     []int // per token rule: where its last attempt stopped reading
}

// What a byte is to the scan loop.
const (
	kindSeparator byte = iota // a word may start after it
	kindWord                  // a letter or digit: most bytes of prose
	kindSpecial               // a control byte or a non-ASCII lead byte: maybe an invisible run
	kindOperator              // ':', '=', or the '-' of a PEM header
)

var byteKind = func() (k [256]byte) {
	for c := range k {
		switch {
		case alnum[c]:
			k[c] = kindWord
		case c < ' ' && c != '\t' && c != '\n' && c != '\r' || c >= 0x7f:
			k[c] = kindSpecial
		}
	}
	k[':'], k['='], k['-'] = kindOperator, kindOperator, kindOperator
	return k
}()

func (s *scanner) scan() {
	t := s.text
	if len(t) > 1 && tokenPairs.has(t[0], t[1]) {
		s.token(0)
	}
	for i := 0; i < len(t) && !s.done; {
		k := byteKind[t[i]]
		if k == kindWord {
			i++
			continue
		}
		if k == kindSpecial {
			i = s.invisibleRun(i)
		} else {
			if k == kindOperator && i >= s.credFrom && t[i] == '-' {
				s.privateKey(i)
			} else if k == kindOperator && i >= s.credFrom {
				s.assignment(i)
			}
			i++
		}
		// A token starts a word: "AKIA…" after a space, quote or '=', never
		// inside "XAKIA…". One bit test passes over most words.
		if i+1 < len(t) && tokenPairs.has(t[i], t[i+1]) && i >= s.credFrom && !s.done {
			s.token(i)
		}
	}
}

// pairSet holds byte pairs, a bit per second byte.
type pairSet [256][4]uint64

func (p *pairSet) has(a, b byte) bool { return p[a][b>>6]&(1<<(b&63)) != 0 }

func (s *scanner) add(f Finding) {
	switch {
	case s.done:
	case len(s.out) == MaxFindings:
		msg := fmt.Sprintf("more than %d findings; the rest are not listed", MaxFindings)
		s.out, s.done = append(s.out, Finding{Rule: RuleTruncated, Message: msg, Offset: f.Offset}), true
	default:
		s.out = append(s.out, f)
	}
}

// token reports a known token shape starting at i.
func (s *scanner) token(i int) {
	if st, end, ok := tokenAt(s.text, i, s.next); ok {
		r := &tokenRules[st.rule]
		s.add(Finding{Rule: r.rule, Message: r.what + " " + st.prefix + "…", Offset: i})
		s.credFrom = end
	}
}

// tokenAt matches the token rules at i. With next, it skips a rule that
// already read past i (it saw the rest of this run, and retrying would make
// the scan quadratic) and records where each attempt stopped.
func tokenAt(t string, i int, next []int) (st tokenStart, end int, ok bool) {
	for _, st := range tokenStarts[t[i]] {
		if next != nil && i < next[st.rule] || !strings.HasPrefix(t[i:], st.prefix) {
			continue
		}
		end, ok := tokenRules[st.rule].match(t, i, i+len(st.prefix))
		if next != nil {
			next[st.rule] = end
		}
		if ok {
			return st, end, true
		}
	}
	return tokenStart{}, 0, false
}

// pemBegin matches the start of a private key block: the BEGIN line, any
// armor headers (Proc-Type:, Version:) and a line's worth of key material,
// so prose that only names the header is not a finding.
var pemBegin = regexp.MustCompile(`^-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY(?: BLOCK)?-----\s*` +
	`(?:[A-Za-z][A-Za-z0-9-]*: [^\r\n]*\s+)*[A-Za-z0-9+/=]{40}`)

// pemKinds are the key types a message may name; any other header text
// stays out of the message.
var pemKinds = map[string]bool{"RSA": true, "EC": true, "DSA": true, "OPENSSH": true, "ENCRYPTED": true}

// privateKey reports a private key block at i.
func (s *scanner) privateKey(i int) {
	t := s.text
	if !strings.HasPrefix(t[i:], "-----BEGIN ") {
		return
	}
	m := pemBegin.FindStringSubmatchIndex(t[i:min(len(t), i+1<<10)])
	if m == nil {
		return
	}
	end := i + m[1]
	for end < len(t) && (base64Byte[t[end]] || t[end] == '\n' || t[end] == '\r') {
		end++
	}
	if strings.HasPrefix(t[end:], "-----END ") {
		if k := strings.Index(t[end+9:min(len(t), end+80)], "-----"); k >= 0 {
			end += 9 + k + 5
		}
	}
	rule, what := RulePrivateKey, "private key block"
	switch kind := strings.TrimSpace(t[i+m[2] : i+m[3]]); {
	case kind == "PGP":
		rule, what = RulePGPPrivateKey, "PGP private key block"
	case pemKinds[kind]:
		what = kind + " private key block"
	}
	s.add(Finding{Rule: rule, Message: what, Offset: i})
	s.credFrom = end
}

// invisibleAt names the rule the character at i breaks, or "", and
// returns where it ends.
func (s *scanner) invisibleAt(i int) (rule string, end int) {
	r, size := utf8.DecodeRuneInString(s.text[i:])
	switch rule = invisibleRule(r); {
	case r == 0xfeff && i == 0:
		rule = "" // a byte-order mark at the start is an encoding artefact
	case (r == 0x200c || r == 0x200d) && s.joins(i, size):
		rule = "" // ZWNJ and ZWJ are spelling in Persian, Indic scripts and emoji sequences
	}
	return rule, i + size
}

// joins reports whether the joiner at i sits between two non-ASCII
// characters that are not themselves invisible, where it shapes text
// rather than hides something in ASCII such as "pass\u200dword".
func (s *scanner) joins(i, size int) bool {
	prev, _ := utf8.DecodeLastRuneInString(s.text[:i])
	next, _ := utf8.DecodeRuneInString(s.text[i+size:])
	visible := func(r rune) bool {
		return r >= utf8.RuneSelf && r != utf8.RuneError && invisibleRule(r) == ""
	}
	return visible(prev) && visible(next)
}

func invisibleRule(r rune) string {
	switch {
	case r < ' ' && r != '\t' && r != '\n' && r != '\r' || r == 0x7f:
		return RuleControlC0
	case r >= 0x80 && r <= 0x9f:
		return RuleControlC1
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return RuleBidi
	case r >= 0x200b && r <= 0x200d, r == 0xfeff:
		return RuleZeroWidth
	}
	return ""
}

// invisibleRun reports the run of invisible characters under one rule
// starting at i, if there is one, and returns where scanning resumes.
func (s *scanner) invisibleRun(i int) int {
	rule, end := s.invisibleAt(i)
	if rule == "" {
		return end
	}
	for end < len(s.text) {
		r, next := s.invisibleAt(end)
		if r != rule {
			break
		}
		end = next
	}
	s.add(Finding{Rule: rule, Message: describeRun(rule, s.text[i:end]), Offset: i})
	return end
}

var runNouns = map[string]string{
	RuleControlC0: "control character",
	RuleControlC1: "C1 control character",
	RuleBidi:      "bidirectional formatting character",
	RuleZeroWidth: "zero-width character",
}

// describeRun names a run's distinct code points, the first four of them.
func describeRun(rule, run string) string {
	var distinct []rune
	for _, r := range run {
		if !slices.Contains(distinct, r) {
			if distinct = append(distinct, r); len(distinct) > 4 {
				break
			}
		}
	}
	names := make([]string, 0, 5)
	for k, r := range distinct {
		if k == 4 {
			names = append(names, "…")
			break
		}
		names = append(names, strings.TrimSpace(fmt.Sprintf("U+%04X %s", r, runeNames[r])))
	}
	if n := utf8.RuneCountInString(run); n > 1 {
		return fmt.Sprintf("%d %ss: %s", n, runNouns[rule], strings.Join(names, ", "))
	}
	return runNouns[rule] + " " + names[0]
}

var runeNames = map[rune]string{
	0x00: "NULL", 0x08: "BACKSPACE", 0x1b: "ESCAPE", 0x7f: "DELETE", 0x85: "NEXT LINE", 0xfeff: "ZERO WIDTH NO-BREAK SPACE",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE", 0x2066: "LEFT-TO-RIGHT ISOLATE",
	0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
}

// tokenRule is a credential with a recognisable shape: a public prefix
// (shown in the message) and a body.
type tokenRule struct {
	rule     string
	what     string
	prefixes []string
	// match reads the token starting at start whose body starts at body;
	// end is where it stopped reading.
	match func(t string, start, body int) (end int, ok bool)
}

var tokenRules = []tokenRule{
	{RuleAWSAccessKey, "AWS access key id", []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"}, body(&upperDigit, 16, 16, nil)},
	{RuleAWSAccessKey, "AWS access key id", []string{"A3T"}, body(&upperDigit, 17, 17, nil)},
	{RuleGitHubToken, "GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body(&alnum, 36, 251, nil)},
	{RuleGitHubToken, "GitHub token", []string{"github_pat_"}, body(&alnumUnderscore, 82, 240, nil)},
	{RuleSlackToken, "Slack token", []string{"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"}, body(&alnumDash, 10, 250, hasDigit)},
	// Longest prefix first, for the message; "sk-learn-compatible-…" prose
	// lacks the digits and mixed case of a random key.
	{RuleOpenAIKey, "OpenAI-style secret key", []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"}, body(&base64URL, 32, 400, mixedCaseAndDigit)},
	{RuleGoogleAPIKey, "Google API key", []string{"AIza"}, body(&base64URL, 35, 35, nil)},
	{RuleStripeLiveKey, "Stripe live key", []string{"sk_live_", "rk_live_"}, body(&alnum, 24, 247, nil)},
	{RuleOMLKey, "OML key", []string{"oml_k_"}, body(&upperDigit, 48, 48, nil)},
	{RuleJWT, "JSON Web Token", []string{"eyJ"}, jwt},
}

type tokenStart struct {
	prefix string
	rule   int
}

// tokenStarts indexes tokenRules by the first byte of each prefix;
// tokenPairs holds the first two bytes of every prefix.
var tokenStarts, tokenPairs = func() (starts [256][]tokenStart, pairs pairSet) {
	for i, r := range tokenRules {
		for _, p := range r.prefixes {
			starts[p[0]] = append(starts[p[0]], tokenStart{p, i})
			pairs[p[0]][p[1]>>6] |= 1 << (p[1] & 63)
		}
	}
	return starts, pairs
}()

func byteClass(ranges string) (c [256]bool) {
	for i := 0; i < len(ranges); i++ {
		if i+2 < len(ranges) && ranges[i+1] == '-' {
			for b := ranges[i]; b <= ranges[i+2]; b++ {
				c[b] = true
			}
			i += 2
			continue
		}
		c[ranges[i]] = true
	}
	return c
}

var (
	upperDigit      = byteClass("A-Z0-9")
	alnum           = byteClass("A-Za-z0-9")
	alnumUnderscore = byteClass("A-Za-z0-9_")
	alnumDash       = byteClass("A-Za-z0-9-")
	base64URL       = byteClass("A-Za-z0-9_-")
	dottedWord      = byteClass("A-Za-z0-9_.-") // JWTs, labels such as db.password
	base64Byte      = byteClass("A-Za-z0-9+/=")
)

// body matches a body of min to max bytes of class, not followed by a
// letter or digit, that passes check.
func body(class *[256]bool, minLen, maxLen int, check func(string) bool) func(string, int, int) (int, bool) {
	return func(t string, _, at int) (int, bool) {
		e, limit := at, min(len(t), at+maxLen+1)
		for e < limit && class[t[e]] {
			e++
		}
		if n := e - at; n < minLen || n > maxLen || e < len(t) && alnum[t[e]] {
			return e, false
		}
		if check != nil && !check(t[at:e]) {
			return e, false
		}
		return e, true
	}
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func mixedCaseAndDigit(s string) bool {
	return hasDigit(s) && strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz")
}

// jwt matches header.payload.signature, each base64url, the header and
// payload JSON objects; the signature may be empty (alg none).
func jwt(t string, start, _ int) (int, bool) {
	e, limit := start, min(len(t), start+16<<10)
	for e < limit && dottedWord[t[e]] {
		e++
	}
	if e == limit && e < len(t) && dottedWord[t[e]] {
		return e, false
	}
	tok := t[start:e]
	if strings.Count(tok, ".") == 3 && strings.HasSuffix(tok, ".") {
		tok = tok[:len(tok)-1] // the full stop after a token
	}
	header, rest, _ := strings.Cut(tok, ".")
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig, ".") || len(header) < 10 || len(payload) < 8 || !strings.HasPrefix(payload, "ey") {
		return e, false
	}
	return start + len(tok), true
}

const (
	maxLabel = 128 // bytes of an assignment's label read back from the operator
	maxValue = 512 // bytes of a literal read after it
)

// secretLabels are the label endings, lower-cased with separators removed,
// that make an assignment a credential: DB_PASSWORD, clientSecret, api-key.
var secretLabels = []struct{ suffix, kind string }{
	{"password", "password"}, {"passwd", "password"},
	{"secret", "secret"}, {"secretkey", "secret"}, {"secretaccesskey", "secret"},
	{"apikey", "API key"}, {"token", "token"},
}

var awsSecretValue = regexp.MustCompile(`^[A-Za-z0-9/+=]{40}$`)

// assignment reports a credential assigned a literal at the operator at i:
// `password: hunter2hunter2`, `"api_key": "…"`, `TOKEN=…`. Labels are
// matched on their last word, so token_url, max_tokens and "the password
// policy requires" are not credentials.
func (s *scanner) assignment(i int) {
	t := s.text
	after, quotedOnly, ok := operator(t, i)
	if !ok {
		return
	}
	kind, aws := labelKind(labelBefore(t, i))
	if kind == "" {
		return
	}
	v := after
	for v < len(t) && v-after < 16 && (t[v] == ' ' || t[v] == '\t') {
		v++
	}
	value, start, end, quoted, ok := literalAt(t, v, quotedOnly)
	if !ok || strings.HasPrefix(t[start:], "-----BEGIN ") {
		return
	}
	if _, _, known := tokenAt(t, start, nil); known {
		return // reported by its own rule, at its own offset
	}
	switch {
	case aws && awsSecretValue.MatchString(value):
		s.add(Finding{Rule: RuleAWSSecretKey, Message: "AWS secret access key", Offset: start})
	case looksSecret(value, quoted):
		s.add(Finding{Rule: RuleAssignment, Message: kind + " assigned a literal value", Offset: start})
	default:
		return
	}
	s.credFrom = end
}

// operator reads the assignment operator at i: ':', '=', ':=' (Go, whose
// bare right-hand side is code, so only a quoted literal counts) or '=>'.
func operator(t string, i int) (after int, quotedOnly, ok bool) {
	var prev, next byte
	if i > 0 {
		prev = t[i-1]
	}
	if i+1 < len(t) {
		next = t[i+1]
	}
	switch op := t[i]; {
	case op == ':' && (prev == ':' || next == ':'), op == '=' && (next == '=' || strings.IndexByte("=!<>:+-*/%&|^~", prev) >= 0):
		return 0, false, false // a scope, a comparison, a compound assignment
	case op == ':' && next == '=', op == '=' && next == '>':
		return i + 2, op == ':', true
	}
	return i + 1, false, true
}

// labelBefore reads the label of the operator at i, past blanks and a
// closing quote.
func labelBefore(t string, i int) string {
	j := i
	for j > 0 && i-j < 16 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	if j > 0 && isQuote(t[j-1]) {
		j--
	}
	k := j
	for k > 0 && j-k < maxLabel && dottedWord[t[k-1]] {
		k--
	}
	return t[k:j]
}

// labelKind says what credential a label names, if any, and whether it
// names an AWS secret access key.
func labelKind(label string) (kind string, aws bool) {
	var buf [maxLabel]byte
	n := 0
	for i := 0; i < len(label); i++ {
		switch c := label[i]; {
		case c >= 'A' && c <= 'Z':
			buf[n], n = c+'a'-'A', n+1
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			buf[n], n = c, n+1
		}
	}
	norm := buf[:n]
	for _, l := range secretLabels {
		if hasSuffix(norm, l.suffix) {
			kind = l.kind
			break
		}
	}
	return kind, hasSuffix(norm, "secretaccesskey") || hasSuffix(norm, "awssecretkey")
}

// hasSuffix compares without converting b, which would allocate.
func hasSuffix(b []byte, suffix string) bool {
	return len(b) >= len(suffix) && string(b[len(b)-len(suffix):]) == suffix
}

// literalAt reads the value at v: a quoted string without blanks on one
// line, or (unless quotedOnly) a bare word; quoted says how to judge it.
func literalAt(t string, v int, quotedOnly bool) (value string, start, end int, quoted, ok bool) {
	if v >= len(t) {
		return "", 0, 0, false, false
	}
	if q := t[v]; isQuote(q) {
		j := strings.IndexByte(t[v+1:min(len(t), v+1+maxValue)], q)
		if j <= 0 || strings.ContainsAny(t[v+1:v+1+j], " \t\r\n") {
			return "", 0, 0, false, false // no literal, or prose in quotes
		}
		// A backquoted value is as often a Markdown code span as a string
		// literal: judge it as a bare word.
		return t[v+1 : v+1+j], v + 1, v + 2 + j, q != '`', true
	}
	j := v
	for j < len(t) && j-v <= maxValue && !bareStop[t[j]] {
		j++
	}
	if quotedOnly || j-v > maxValue || j < len(t) && (t[j] == '(' || t[j] == '[') {
		return "", 0, 0, false, false // a call or an index: code, not a literal
	}
	e := j
	for e > v && t[e-1] == '.' {
		e-- // the full stop after a sentence
	}
	return t[v:e], v, e, false, e > v
}

var bareStop = func() (c [256]bool) {
	for b := 0; b <= ' '; b++ {
		c[b] = true
	}
	for _, b := range []byte("\x7f\"'`,;&<>()[]") {
		c[b] = true
	}
	return c
}()

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// placeholders mark documentation and redacted values, not secrets.
var placeholders = []string{"***", "xxxx", "…", "...", "redacted", "placeholder", "example", "changeme", "your"}

// looksSecret keeps the generic rule conservative: at least 8 characters,
// no placeholder, path or URL, and a bare value must mix a letter with a
// digit or a symbol, so `password: required` and `secret: cfg.Secret` pass.
func looksSecret(v string, quoted bool) bool {
	if utf8.RuneCountInString(v) < 8 || strings.IndexByte("$<{%", v[0]) >= 0 || strings.Count(v, v[:1]) == len(v) {
		return false
	}
	lower := strings.ToLower(v)
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return false
		}
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") || strings.Contains(v, "://") {
		return false // a path or URL
	}
	if quoted {
		return true
	}
	letter := strings.ContainsFunc(v, unicode.IsLetter)
	other := strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !strings.ContainsRune("_.-", r) })
	return letter && other // a digit or a symbol an identifier would not have
}
