package domain

import (
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every credential below is an obviously fake one, assembled from pieces
// so that no single literal in the repository looks like a secret.
var (
	fakeAWSKey    = "AK" + "IA" + strings.Repeat("X", 16)
	fakeAWSSecret = strings.Repeat("Ab1/", 10)
	fakeGitHub    = "gh" + "p_" + strings.Repeat("a1B2", 9)
	fakeGitHubPAT = "github" + "_pat_" + strings.Repeat("aB3_", 20) + "Zz"
	fakeSlack     = "xo" + "xb-" + "1234567890-1234567890-" + strings.Repeat("aB", 12)
	fakeOpenAI    = "sk" + "-" + strings.Repeat("aB3", 16)
	fakeOpenAIPrj = "sk" + "-proj-" + strings.Repeat("aB3_x-", 20)
	fakeGoogle    = "AI" + "za" + strings.Repeat("aB3_-", 7)
	fakeStripe    = "sk" + "_live_" + strings.Repeat("aB3", 8)
	fakeStripeRK  = "rk" + "_live_" + strings.Repeat("aB3", 10)
	fakeOML       = "oml" + "_k_" + strings.Repeat("0A", 24)
	fakeJWT       = "ey" + "JhbGciOiJIUzI1NiJ9" + "." + "ey" + "JzdWIiOiIxMjM0In0" + "." + strings.Repeat("s1G", 10)
	fakeKeyBody   = strings.Repeat("QUJD", 16) + "\n" + strings.Repeat("REVG", 16) + "\n"
)

// pemBlock wraps the fake key body as a kind ("RSA", "", "PGP") of
// private key, after the armor headers.
func pemBlock(kind, headers string) string {
	label := strings.TrimSpace(kind+" PRIVATE") + " " + "KEY"
	if kind == "PGP" {
		label += " BLOCK"
	}
	return "-----BEGIN " + label + "-----\n" + headers + fakeKeyBody + "-----END " + label + "-----"
}

type credentialCase struct {
	name   string
	text   string
	rule   string
	secret string // what the message must never show
	public string // the prefix of secret a message may show
}

func credentialCases() []credentialCase {
	rsa := pemBlock("RSA", "")
	return []credentialCase{
		{"aws access key", "key id " + fakeAWSKey + " in us-east-1", RuleAWSAccessKey, fakeAWSKey, "AKIA"},
		{"aws session key", "ASIA" + fakeAWSKey[4:], RuleAWSAccessKey, "ASIA" + fakeAWSKey[4:], "ASIA"},
		{"aws secret", "aws_secret_access_key = " + fakeAWSSecret, RuleAWSSecretKey, fakeAWSSecret, ""},
		{"aws secret env", "export AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret + "\n", RuleAWSSecretKey, fakeAWSSecret, ""},
		{"aws secret json", `{"SecretAccessKey": "` + fakeAWSSecret + `"}`, RuleAWSSecretKey, fakeAWSSecret, ""},
		{"github token", "use " + fakeGitHub + ".", RuleGitHubToken, fakeGitHub, "ghp_"},
		{"github pat", "`" + fakeGitHubPAT + "`", RuleGitHubToken, fakeGitHubPAT, "github_pat_"},
		{"github token in env", "GITHUB_TOKEN=" + fakeGitHub, RuleGitHubToken, fakeGitHub, "ghp_"},
		{"slack token", "bot: " + fakeSlack, RuleSlackToken, fakeSlack, "xoxb-"},
		{"openai key", "OPENAI_API_KEY=" + fakeOpenAI, RuleOpenAIKey, fakeOpenAI, "sk-"},
		{"openai project key", "key " + fakeOpenAIPrj, RuleOpenAIKey, fakeOpenAIPrj, "sk-proj-"},
		{"google api key", "?key=" + fakeGoogle + "&q=x", RuleGoogleAPIKey, fakeGoogle, "AIza"},
		{"stripe secret key", fakeStripe, RuleStripeLiveKey, fakeStripe, "sk_live_"},
		{"stripe restricted key", "(" + fakeStripeRK + ")", RuleStripeLiveKey, fakeStripeRK, "rk_live_"},
		{"oml key", "Authorization: Bearer " + fakeOML, RuleOMLKey, fakeOML, "oml_k_"},
		{"jwt", "Bearer " + fakeJWT + ".", RuleJWT, fakeJWT, "eyJ"},
		{"password yaml", "password: hunter2" + "hunter2", RuleAssignment, "hunter2hunter2", ""},
		{"api key json", `{"api_key": "abcd` + `1234efgh"}`, RuleAssignment, "abcd1234efgh", ""},
		{"password env", "DB_PASSWORD=s3cr3t-" + "value-1", RuleAssignment, "s3cr3t-value-1", ""},
		{"pgpassword", "PGPASSWORD=Tr0ub4" + "dor&3 psql", RuleAssignment, "Tr0ub4dor", ""},
		{"go literal", `password := "correct` + `horsebattery"`, RuleAssignment, "correcthorsebattery", ""},
		{"client secret", "client_secret = 'Zx9" + "Qw8Er7Ty6'", RuleAssignment, "Zx9Qw8Er7Ty6", ""},
		{"camel token", "const accessToken = `tok" + "en-0123456789`", RuleAssignment, "token-0123456789", ""},
		{"cli flag", "--token=9f8e7d6c" + "5b4a3921", RuleAssignment, "9f8e7d6c5b4a3921", ""},
		{"ruby hash", `:passwd => "pa55` + `w0rd!!"`, RuleAssignment, "pa55w0rd!!", ""},
		{"rsa key", rsa, RulePrivateKey, fakeKeyBody[:64], ""},
		{"ec key", "key:\n" + pemBlock("EC", ""), RulePrivateKey, fakeKeyBody[:64], ""},
		{"openssh key", pemBlock("OPENSSH", ""), RulePrivateKey, fakeKeyBody[:64], ""},
		{"dsa key", pemBlock("DSA", ""), RulePrivateKey, fakeKeyBody[:64], ""},
		{"encrypted pkcs8 key", pemBlock("ENCRYPTED", ""), RulePrivateKey, fakeKeyBody[:64], ""},
		{"pkcs8 key", pemBlock("", ""), RulePrivateKey, fakeKeyBody[:64], ""},
		{"legacy encrypted pem", pemBlock("RSA", "Proc-Type: 4,ENCRYPTED\r\nDEK-Info: AES-128-CBC,00FF\r\n\r\n"), RulePrivateKey, fakeKeyBody[:64], ""},
		{"pgp key", pemBlock("PGP", "Version: GnuPG v2\n\n"), RulePGPPrivateKey, fakeKeyBody[:64], ""},
		{"unterminated key", rsa[:strings.Index(rsa, "-----END")] + "(cut here)", RulePrivateKey, fakeKeyBody[:64], ""},
	}
}

func TestScanFindsCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range credentialCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Scan(tc.text)
			if len(got) != 1 || got[0].Rule != tc.rule {
				t.Fatalf("Scan(%q) = %+v, want one %s", tc.text, got, tc.rule)
			}
			want := strings.Index(tc.text, tc.secret)
			if tc.rule == RulePrivateKey || tc.rule == RulePGPPrivateKey {
				want = strings.Index(tc.text, "-----BEGIN")
			}
			if got[0].Offset != want {
				t.Errorf("offset = %d, want %d", got[0].Offset, want)
			}
		})
	}
}

func TestScanMessagesNeverContainTheSecret(t *testing.T) {
	t.Parallel()
	cases := credentialCases()
	var all strings.Builder
	for _, tc := range cases {
		all.WriteString(tc.text + "\n\n")
	}
	got := Scan(all.String())
	if len(got) != len(cases) {
		t.Fatalf("Scan found %d, want %d: %+v", len(got), len(cases), got)
	}
	for _, f := range got {
		for _, tc := range cases {
			private := tc.secret[len(tc.public):]
			for i := 0; i+6 <= len(private); i++ {
				if strings.Contains(f.Message, private[i:i+6]) {
					t.Fatalf("%s message %q shows %q of the %s secret", f.Rule, f.Message, private[i:i+6], tc.name)
				}
			}
		}
	}
}

func TestScanIgnoresOrdinaryText(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	image := make([]byte, 3<<10)
	for i := range image {
		image[i] = byte(rng.Uint32())
	}
	cases := []struct{ name, text string }{
		{"password policy", "The password policy requires 12 characters; rotate the password: see the runbook."},
		{"token bucket", "A token bucket refills at 10 tokens/s. Token bucket: capacity 100, refill 10/s."},
		{"sk-learn", "We use sk-learn, i.e. sk-learn-compatible-estimators-and-transformers-for-everything."},
		{"base64 image", "![plot](data:image/png;base64," + base64.StdEncoding.EncodeToString(image) + ")"},
		{"base64url blob", base64.RawURLEncoding.EncodeToString(image)},
		{"uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed"},
		{"go short declaration", "token := next()\ntoken := nextToken(ctx)\npassword := os.Getenv(\"DB_PASSWORD\")"},
		{"code references", "password = cfg.Password\nsecret: process.env.CLIENT_SECRET\napi_key = keys[0]\nif token == \"\" {"},
		{"label qualifiers", "token_url: https://auth.example.com/oauth/token\nmax_tokens: 4096\npassword_min_length = 12\ntokenizer = bert-base-uncased-v2"},
		{"placeholders", "password: ${DB_PASSWORD}\napi_key: <your-api-key>\ntoken: ********\nsecret = \"{{ .Secret }}\"\npassword: REDACTED1"},
		{"bare words", "password: required\nsecret: none-given\ntoken: optional"},
		{"numbers and paths", "token: 1234567890\npassword_file: /run/secrets/db\npassword: /run/secrets/db1"},
		{"quoted prose", `the "password": "is not shown here"`},
		{"pem header in prose", "A key file starts with " + strings.SplitAfter(pemBlock("RSA", ""), "\n")[0] + "and ends with the END line."},
		{"pem placeholder", strings.Replace(pemBlock("", ""), fakeKeyBody, "...\n", 1)},
		{"public key", "-----BEGIN PUBLIC KEY-----\n" + fakeKeyBody + "-----END PUBLIC KEY-----"},
		{"short tokens", "gh" + "p_abc, AK" + "IA1234, xo" + "xb-token, AI" + "za, oml" + "_k_short, ey" + "Jhb.ey.x"},
		{"token inside a word", "X" + fakeAWSKey + " " + fakeAWSKey + "x"},
		{"markdown", "# Notes\r\n\n| a\t| b\t|\n|---|---|\n\t- item\n\n```go\nx := 1\n```\n"},
		{"emoji and scripts", "family 👨\u200d👩\u200d👧, flag 🏳\ufe0f\u200d🌈, می\u200cخواهم, क्\u200dष"},
		{"leading byte-order mark", "\ufeffhello"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Scan(tc.text); len(got) != 0 {
				t.Errorf("Scan(%q) = %+v, want none", tc.text, got)
			}
		})
	}
}

func TestScanOffsetsInOrder(t *testing.T) {
	t.Parallel()
	pem := pemBlock("OPENSSH", "")
	// The key body holds an AWS-looking line: it is part of the block, not
	// a finding of its own.
	pemWithAWS := strings.Replace(pem, "REVG", fakeAWSKey+"\n", 1)
	text := "héllo\u202eworld " + fakeGitHub + "\npassword: hunter2hunter2\n" + pemWithAWS + "\n\x1b[31mred\x1b[0m " + fakeJWT
	want := []struct {
		rule string
		at   int
	}{
		{RuleBidi, strings.Index(text, "\u202e")},
		{RuleGitHubToken, strings.Index(text, fakeGitHub)},
		{RuleAssignment, strings.Index(text, "hunter2")},
		{RulePrivateKey, strings.Index(text, "-----BEGIN")},
		{RuleControlC0, strings.Index(text, "\x1b")},
		{RuleControlC0, strings.LastIndex(text, "\x1b")},
		{RuleJWT, strings.Index(text, fakeJWT)},
	}
	got := Scan(text)
	if len(got) != len(want) {
		t.Fatalf("Scan = %+v, want %d findings", got, len(want))
	}
	for i, w := range want {
		if got[i].Rule != w.rule || got[i].Offset != w.at {
			t.Errorf("finding %d = %s at %d, want %s at %d", i, got[i].Rule, got[i].Offset, w.rule, w.at)
		}
	}
}

func TestScanTruncatesAtMaxFindings(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a\a", MaxFindings+10)
	got := Scan(text)
	if len(got) != MaxFindings+1 {
		t.Fatalf("Scan found %d, want %d", len(got), MaxFindings+1)
	}
	last := got[MaxFindings]
	if last.Rule != RuleTruncated || last.Offset != 2*MaxFindings+1 {
		t.Errorf("last = %+v, want %s at %d", last, RuleTruncated, 2*MaxFindings+1)
	}
	if got := Scan(strings.Repeat("a\a", MaxFindings)); len(got) != MaxFindings || got[MaxFindings-1].Rule != RuleControlC0 {
		t.Errorf("exactly MaxFindings findings are listed without truncation: %+v", got[len(got)-1])
	}
}

func TestScanGroupsControlRuns(t *testing.T) {
	t.Parallel()
	type finding struct {
		rule    string
		at      int
		message string
	}
	cases := []struct {
		name string
		text string
		want []finding
	}{
		{"bell run", "ding\a\a\adone", []finding{{RuleControlC0, 4, "3 control characters: U+0007"}}},
		{"one override", "abc\u202edef", []finding{{RuleBidi, 3, "bidirectional formatting character U+202E RIGHT-TO-LEFT OVERRIDE"}}},
		{"override and isolate", "a\u202e\u2066\u202eb", []finding{{RuleBidi, 1, "3 bidirectional formatting characters: U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE"}}},
		{"separate runs", "a\u202eb\u202ec", []finding{{RuleBidi, 1, "U+202E"}, {RuleBidi, 5, "U+202E"}}},
		{"rule change splits a run", "a\u202e\u200bb", []finding{{RuleBidi, 1, "U+202E"}, {RuleZeroWidth, 4, "U+200B ZERO WIDTH SPACE"}}},
		{"zero width in ascii", "pass\u200dword", []finding{{RuleZeroWidth, 4, "U+200D ZERO WIDTH JOINER"}}},
		{"inner byte-order mark", "a\ufeffb", []finding{{RuleZeroWidth, 1, "U+FEFF"}}},
		{"c1 control", "x\u0085y\u009b", []finding{{RuleControlC1, 1, "U+0085 NEXT LINE"}, {RuleControlC1, 4, "U+009B"}}},
		{"delete and null", "a\x7f\x00b", []finding{{RuleControlC0, 1, "2 control characters: U+007F DELETE, U+0000 NULL"}}},
		{"many distinct", "a\x01\x02\x03\x04\x05\x06b", []finding{{RuleControlC0, 1, "6 control characters: U+0001, U+0002, U+0003, U+0004, …"}}},
		{"run at the end", "abc\x1b", []finding{{RuleControlC0, 3, "U+001B ESCAPE"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Scan(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("Scan(%q) = %+v, want %d findings", tc.text, got, len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].Rule != w.rule || got[i].Offset != w.at || !strings.Contains(got[i].Message, w.message) {
					t.Errorf("finding %d = %+v, want %s at %d with %q", i, got[i], w.rule, w.at, w.message)
				}
			}
		})
	}
}

func FuzzScan(f *testing.F) {
	for _, tc := range credentialCases() {
		f.Add(tc.text)
	}
	f.Add("a\u202e\u200d\x00b" + strings.Repeat("\a ", 60))
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		got := Scan(text)
		if len(got) > MaxFindings+1 {
			t.Fatalf("%d findings", len(got))
		}
		if !slices.IsSortedFunc(got, func(a, b Finding) int { return a.Offset - b.Offset }) {
			t.Fatalf("findings out of order: %+v", got)
		}
		for i, f := range got {
			if f.Offset < 0 || f.Offset >= len(text) || f.Rule == "" || f.Message == "" {
				t.Fatalf("bad finding %+v", f)
			}
			if f.Rule == RuleTruncated && i != MaxFindings {
				t.Fatalf("truncation marker at %d", i)
			}
		}
	})
}

// prose returns n bytes of ordinary English-like Markdown with the words a
// scanner must not trip on.
func prose(n int) string {
	words := strings.Fields(`the a an of to and in is that for it as with was on be at by this
		had not are but from or have which one you were her all she there would their we him
		been has when who will more no if out so said what up its about into than them can only
		other new some could time these two may then do first any my now such like our over
		man me even most made after also did many before must through back years where much
		your way well down should because each just those people how too little state good
		password policy token bucket secret sauce key rotation sk-learn API AKIA review held
		promoted claim workarea Agent Memory A As After And`)
	rng := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.Grow(n + 64)
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		switch r := rng.IntN(40); {
		case r == 0:
			b.WriteString(".\n\n")
		case r < 3:
			b.WriteString(", ")
		case r == 3:
			b.WriteString(": ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}

func BenchmarkScan(b *testing.B) {
	b.Run("prose_256KiB", func(b *testing.B) {
		text := prose(256 << 10)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Scan(text)
		}
	})
	// Dense trigger bytes and near-misses: the bounded per-position work.
	b.Run("near_misses_256KiB", func(b *testing.B) {
		unit := "sk-sk-eyJeyJ.eyJ AKIA password: x token=" + "-----BEGIN EC PRIVATE KEY-----\n" + "ghp_" + strings.Repeat("a", 30) + "\n"
		text := strings.Repeat(unit, (256<<10)/len(unit)+1)[:256<<10]
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Scan(text)
		}
	})
}
