package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"strings"
)

// TokenPrefix starts every key token.
const TokenPrefix = "oml_k_"

const (
	selectorLen = 10 // finds the key row; not secret on its own
	secretLen   = 20 // 160 random bits; only its SHA-256 is stored
)

// crockford is the ULID alphabet: no I, L, O or U.
var crockford = base32.NewEncoding("0123456789ABCDEFGHJKMNPQRSTVWXYZ").WithPadding(base32.NoPadding)

// Token is a freshly minted key token; Plain is shown once.
type Token struct {
	Plain    string
	Selector []byte
	Verifier []byte
}

// The prefixes of the web sign-in's credentials (see [NewTokenWith]): a
// browser session's cookie and a one-time sign-in code.
const (
	WebSessionPrefix = "oml_w_"
	WebCodePrefix    = "oml_c_"
)

// NewToken mints a key token: "oml_k_" + base32(selector ‖ secret).
func NewToken() (Token, error) { return NewTokenWith(TokenPrefix) }

// NewTokenWith mints a token with another prefix (web credentials).
func NewTokenWith(prefix string) (Token, error) {
	raw := make([]byte, selectorLen+secretLen)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, err
	}
	sum := sha256.Sum256(raw[selectorLen:])
	return Token{
		Plain:    prefix + crockford.EncodeToString(raw),
		Selector: raw[:selectorLen],
		Verifier: sum[:],
	}, nil
}

// ParseToken splits a presented token into its selector and the SHA-256 of
// its secret; ok is false when it is not a well-formed token.
func ParseToken(s string) (selector, verifier []byte, ok bool) { return ParseTokenWith(TokenPrefix, s) }

// ParseTokenWith is [ParseToken] for a token minted with prefix.
func ParseTokenWith(prefix, s string) (selector, verifier []byte, ok bool) {
	body, found := strings.CutPrefix(s, prefix)
	if !found || len(body) != crockford.EncodedLen(selectorLen+secretLen) {
		return nil, nil, false
	}
	raw, err := crockford.DecodeString(body)
	if err != nil || len(raw) != selectorLen+secretLen {
		return nil, nil, false
	}
	sum := sha256.Sum256(raw[selectorLen:])
	return raw[:selectorLen], sum[:], true
}

// VerifierMatches compares verifiers in constant time.
func VerifierMatches(stored, presented []byte) bool {
	return subtle.ConstantTimeCompare(stored, presented) == 1
}
