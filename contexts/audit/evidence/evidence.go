// Package evidence is the evidence file of OML's audit context: what GET
// /v1/evidence answers and `oml evidence verify` checks offline with only
// the deployment's public signing key.
//
// A file holds, for one workarea subtree and time range, every submission
// with its signed envelope, every serve with its reviewer and verdict, the
// reciprocal-approval statistics and the tenant's journal segment for the
// range (events outside the subtree reduced to their links). A manifest
// names every record with the SHA-256 of its canonical JSON and the
// segment's first and last links, and the deployment signs the manifest:
// changing any byte of a record, dropping one or adding one fails
// verification naming the record.
package evidence

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/omlhub/oml/platform/canonjson"
	"github.com/omlhub/oml/platform/journal"
)

// Format names this file layout.
const Format = "oml-evidence/1"

// File is one evidence export.
type File struct {
	Format            string       `json:"format"`
	Manifest          Manifest     `json:"manifest"`
	ManifestSignature string       `json:"manifest_signature"` // base64 Ed25519 over the manifest's canonical JSON
	SigningKey        string       `json:"signing_key"`        // base64 Ed25519 public key the deployment signs with
	Submissions       []Submission `json:"submissions"`
	Serves            []Serve      `json:"serves"`
	Reciprocal        Reciprocal   `json:"reciprocal"`
	Journal           []Event      `json:"journal"`
}

// Manifest binds the file's records and journal segment; the deployment
// signs it.
type Manifest struct {
	TenantID    string      `json:"tenant_id"`
	Workarea    Workarea    `json:"workarea"`
	From        time.Time   `json:"from"`
	To          time.Time   `json:"to"`
	GeneratedAt time.Time   `json:"generated_at"`
	Journal     JournalSpan `json:"journal"`
	// Records maps each record's id (submission:<artifact>, serve:<serve>,
	// event:<seq>, reciprocal) to the hex SHA-256 of its canonical JSON.
	Records map[string]string `json:"records"`
}

// Workarea is the exported subtree's root.
type Workarea struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

// JournalSpan is the exported segment of the tenant's chain.
type JournalSpan struct {
	FromSeq  int64  `json:"from_seq"`
	ToSeq    int64  `json:"to_seq"`
	PrevHash string `json:"prev_hash"` // the link before from_seq
	LastHash string `json:"last_hash"` // to_seq's hash
	HeadSeq  int64  `json:"head_seq"`  // the chain's head when exported
	HeadHash string `json:"head_hash"`
}

// Submission is a claim submitted in the subtree, with its signed envelope
// (which binds the SHA-256 of the text; the file holds no text, so no
// erased text can appear and a file's size does not grow with texts).
type Submission struct {
	ArtifactID      string          `json:"artifact_id"`
	WorkareaID      string          `json:"workarea_id"`
	ClaimKey        string          `json:"claim_key"`
	Version         int             `json:"version"`
	Kind            string          `json:"kind"`
	State           string          `json:"state"`
	AuthorKeyID     string          `json:"author_key_id"`
	AuthorPrincipal string          `json:"author_principal"`
	SelfSigned      bool            `json:"self_signed"`
	SubmittedAt     time.Time       `json:"submitted_at"`
	PromotedAt      *time.Time      `json:"promoted_at,omitempty"`
	SettledAt       *time.Time      `json:"settled_at,omitempty"`
	Envelope        json.RawMessage `json:"envelope"`
	Signature       string          `json:"signature"` // base64 Ed25519 over the envelope's canonical JSON
}

// Serve is a serve of a claim in the subtree with its verdict (if any), the
// reviewer (key and principal), the reason and the closure checked.
type Serve struct {
	ServeID           string     `json:"serve_id"`
	ArtifactID        string     `json:"artifact_id"`
	ReviewerKeyID     string     `json:"reviewer_key_id"`
	ReviewerPrincipal string     `json:"reviewer_principal"`
	AuthorPrincipal   string     `json:"author_principal"`
	SelfSigned        bool       `json:"self_signed"`
	ServedAt          time.Time  `json:"served_at"`
	ExpiresAt         time.Time  `json:"expires_at"`
	ConsumedAt        *time.Time `json:"consumed_at,omitempty"`
	Verdict           string     `json:"verdict,omitempty"`
	Reason            string     `json:"reason,omitempty"`
	Closure           []string   `json:"closure"`
}

// Reciprocal is the reciprocal-approval statistics: pairs of principals
// who approved each other's work in the range.
type Reciprocal struct {
	// Threshold flags a pair when each approved the other in at least this
	// share of all the approvals it gave.
	Threshold float64 `json:"threshold"`
	Pairs     []Pair  `json:"pairs"`
}

// Pair is two principals who approved each other's work.
type Pair struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	AApprovedB int     `json:"a_approved_b"`
	BApprovedA int     `json:"b_approved_a"`
	AApprovals int     `json:"a_approvals"` // all approvals A gave
	BApprovals int     `json:"b_approvals"`
	RateAB     float64 `json:"rate_ab"` // a_approved_b / a_approvals
	RateBA     float64 `json:"rate_ba"`
	Flagged    bool    `json:"flagged"`
}

// Event is one event of the journal segment. An event outside the
// exported subtree is redacted: only its seq and links remain.
type Event struct {
	Seq      int64           `json:"seq"`
	Redacted bool            `json:"redacted,omitempty"`
	EventID  string          `json:"event_id,omitempty"`
	Type     string          `json:"event_type,omitempty"`
	At       *time.Time      `json:"at,omitempty"`
	Actor    string          `json:"actor,omitempty"`
	Workarea string          `json:"workarea_id,omitempty"`
	Subject  json.RawMessage `json:"subject,omitempty"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// ReciprocalOf computes the statistics from the serves' approvals.
func ReciprocalOf(serves []Serve, threshold float64) Reciprocal {
	given := map[string]int{}
	edge := map[[2]string]int{}
	for _, s := range serves {
		if s.Verdict != "approve" || s.ReviewerPrincipal == s.AuthorPrincipal {
			continue
		}
		given[s.ReviewerPrincipal]++
		edge[[2]string{s.ReviewerPrincipal, s.AuthorPrincipal}]++
	}
	out := Reciprocal{Threshold: threshold, Pairs: []Pair{}}
	for k, ab := range edge {
		a, b := k[0], k[1]
		ba := edge[[2]string{b, a}]
		if a >= b || ba == 0 {
			continue
		}
		p := Pair{A: a, B: b, AApprovedB: ab, BApprovedA: ba, AApprovals: given[a], BApprovals: given[b]}
		p.RateAB, p.RateBA = round(float64(ab)/float64(given[a])), round(float64(ba)/float64(given[b]))
		p.Flagged = p.RateAB >= threshold && p.RateBA >= threshold
		out.Pairs = append(out.Pairs, p)
	}
	sort.Slice(out.Pairs, func(i, j int) bool {
		return out.Pairs[i].A < out.Pairs[j].A || (out.Pairs[i].A == out.Pairs[j].A && out.Pairs[i].B < out.Pairs[j].B)
	})
	return out
}

func round(x float64) float64 { return math.Round(x*10000) / 10000 }

// Digest is the hex SHA-256 of v's canonical JSON.
func Digest(v any) (string, error) {
	b, err := canonjson.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Records lists the file's records by id, in file order.
func (f *File) Records() ([]string, map[string]any) {
	var order []string
	m := map[string]any{}
	add := func(id string, v any) {
		order = append(order, id)
		m[id] = v
	}
	for _, s := range f.Submissions {
		add("submission:"+s.ArtifactID, s)
	}
	for _, s := range f.Serves {
		add("serve:"+s.ServeID, s)
	}
	add("reciprocal", f.Reciprocal)
	for _, e := range f.Journal {
		add("event:"+strconv.FormatInt(e.Seq, 10), e)
	}
	return order, m
}

// Seal fills the manifest's record digests and signs it.
func (f *File) Seal(key ed25519.PrivateKey) error {
	order, recs := f.Records()
	f.Manifest.Records = make(map[string]string, len(order))
	for _, id := range order {
		d, err := Digest(recs[id])
		if err != nil {
			return fmt.Errorf("digest %s: %w", id, err)
		}
		f.Manifest.Records[id] = d
	}
	body, err := canonjson.Marshal(f.Manifest)
	if err != nil {
		return err
	}
	f.Format = Format
	f.SigningKey = base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	f.ManifestSignature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))
	return nil
}

// Problem is one thing that did not verify, naming its record.
type Problem struct {
	Record string `json:"record"`
	Reason string `json:"reason"`
}

// Report is what Verify found.
type Report struct {
	OK          bool      `json:"ok"`
	Submissions int       `json:"submissions"`
	Serves      int       `json:"serves"`
	Events      int       `json:"events"`
	Redacted    int       `json:"redacted_events"`
	Flagged     int       `json:"flagged_pairs"`
	Problems    []Problem `json:"problems"`
}

// Verify checks a file with the deployment's public key: the manifest's
// signature, every record against the manifest, every envelope's signature
// (naming its claim, author and text digest), the journal segment's links
// and hashes, and the reciprocal statistics against the serves. The
// manifest is signed with pub, the key that made the export; an envelope
// may also verify with one of earlier, the keys a signing-key rotation
// retired (docs/OPERATIONS.md, Rotating keys).
func Verify(f *File, pub ed25519.PublicKey, earlier ...ed25519.PublicKey) Report {
	envelopeKeys := append([]ed25519.PublicKey{pub}, earlier...)
	rep := Report{Problems: []Problem{}}
	bad := func(record, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Record: record, Reason: fmt.Sprintf(format, args...)})
	}
	// ed25519.Verify panics on a key of another length: refuse instead.
	if len(pub) != ed25519.PublicKeySize || slices.ContainsFunc(earlier, func(k ed25519.PublicKey) bool { return len(k) != ed25519.PublicKeySize }) {
		bad("signing_key", "a key given is not an Ed25519 public key")
		return rep
	}
	if f.Format != Format {
		bad("file", "format %q, want %q", f.Format, Format)
	}
	body, err := canonjson.Marshal(f.Manifest)
	sig, serr := base64.StdEncoding.DecodeString(f.ManifestSignature)
	if err != nil || serr != nil || !ed25519.Verify(pub, body, sig) {
		bad("manifest", "the manifest's signature does not verify with the signing key")
	}
	if embedded, err := base64.StdEncoding.DecodeString(f.SigningKey); err != nil || !bytes.Equal(embedded, pub) {
		bad("signing_key", "the file names another signing key than the one verified with")
	}
	// Every record is in the manifest with its digest, and every manifest
	// record is in the file.
	order, recs := f.Records()
	seen := map[string]bool{}
	for _, id := range order {
		if seen[id] {
			bad(id, "the record appears twice")
			continue
		}
		seen[id] = true
		want, ok := f.Manifest.Records[id]
		if !ok {
			bad(id, "the record is not in the manifest")
			continue
		}
		if got, err := Digest(recs[id]); err != nil || got != want {
			bad(id, "the record does not match its digest in the manifest (it was changed)")
		}
	}
	for id := range f.Manifest.Records {
		if !seen[id] {
			bad(id, "the manifest names a record the file does not hold")
		}
	}
	// Envelopes: signed by the deployment, naming their claim.
	for _, s := range f.Submissions {
		id := "submission:" + s.ArtifactID
		sig, err := base64.StdEncoding.DecodeString(s.Signature)
		canon, cerr := canonjson.Canonicalize(s.Envelope)
		if err != nil || cerr != nil || !slices.ContainsFunc(envelopeKeys, func(k ed25519.PublicKey) bool { return ed25519.Verify(k, canon, sig) }) {
			bad(id, "the envelope's signature does not verify")
			continue
		}
		var env struct {
			ArtifactID  string `json:"artifact_id"`
			AuthorKeyID string `json:"author_key_id"`
			TextSHA256  string `json:"text_sha256"`
		}
		if err := json.Unmarshal(s.Envelope, &env); err != nil || env.ArtifactID != s.ArtifactID || env.AuthorKeyID != s.AuthorKeyID {
			bad(id, "the envelope names another claim or author")
		}
		if len(env.TextSHA256) != 64 {
			bad(id, "the envelope binds no text digest")
		}
	}
	// The journal segment: contiguous, linked, and each event's hash
	// recomputed where it is not redacted.
	span := f.Manifest.Journal
	prev, perr := hex.DecodeString(span.PrevHash)
	if perr != nil {
		bad("manifest", "the segment's prev_hash is not hex")
	}
	want := span.FromSeq
	for _, e := range f.Journal {
		id := "event:" + strconv.FormatInt(e.Seq, 10)
		if e.Seq != want {
			bad(id, "seq %d where %d was expected (a gap or a reordering)", e.Seq, want)
		}
		want = e.Seq + 1
		p, err1 := hex.DecodeString(e.PrevHash)
		h, err2 := hex.DecodeString(e.Hash)
		if err1 != nil || err2 != nil {
			bad(id, "a link is not hex")
			continue
		}
		if !bytes.Equal(p, prev) {
			bad(id, "prev_hash does not link to the event before")
		}
		if e.Redacted {
			rep.Redacted++
		} else {
			at := time.Time{}
			if e.At != nil {
				at = *e.At
			}
			sum, err := journal.Link(p, f.Manifest.TenantID, journal.Stored{
				Seq: e.Seq, ID: e.EventID, Type: e.Type, At: at, Actor: e.Actor, Workarea: e.Workarea,
				Subject: orObject(e.Subject), Payload: orObject(e.Payload),
			})
			if err != nil || !bytes.Equal(sum, h) {
				bad(id, "the event's hash does not recompute (the event was changed)")
			}
		}
		prev = h
		rep.Events++
	}
	if len(f.Journal) > 0 && (want-1 != span.ToSeq || hex.EncodeToString(prev) != span.LastHash) {
		bad("manifest", "the segment does not end at seq %d with the manifest's last hash", span.ToSeq)
	}
	// The statistics are what the serves say.
	if got := ReciprocalOf(f.Serves, f.Reciprocal.Threshold); !slices.EqualFunc(got.Pairs, f.Reciprocal.Pairs, func(a, b Pair) bool { return a == b }) {
		bad("reciprocal", "the statistics do not follow from the serves")
	}
	for _, p := range f.Reciprocal.Pairs {
		if p.Flagged {
			rep.Flagged++
		}
	}
	rep.Submissions, rep.Serves = len(f.Submissions), len(f.Serves)
	rep.OK = len(rep.Problems) == 0
	return rep
}

func orObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}
