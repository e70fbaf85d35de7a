// Package config parses OML's typed configuration from OML_* environment
// variables, once, with defaults and validation. Secrets are masked whenever
// the configuration is logged.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the whole server configuration. The variable names are a
// contract (DESIGN.md, Configuration).
type Config struct {
	DatabaseURL    string   // OML_DATABASE_URL
	Listen         string   // OML_LISTEN
	PublicURL      string   // OML_PUBLIC_URL
	AllowedOrigins []string // OML_ALLOWED_ORIGINS: extra browser origins accepted on /mcp and by the pages
	BlobStore      string   // OML_BLOB_STORE
	SigningKeyFile string   // OML_SIGNING_KEY_FILE
	MasterKeyFile  string   // OML_MASTER_KEY_FILE
	// PreviousMasterKeyFiles are the master keys a rotation replaced,
	// which still unwrap until `oml-server rewrap` is done
	// (OML_PREVIOUS_MASTER_KEY_FILES, comma-separated); AddressKeyFile
	// keeps the content addresses across rotations (OML_ADDRESS_KEY_FILE).
	PreviousMasterKeyFiles []string
	AddressKeyFile         string
	Replicas               int   // OML_REPLICAS
	MaxBodyBytes           int64 // OML_MAX_BODY_BYTES: bound on JSON request bodies under /v1
	MaxMCPBodyBytes        int64 // OML_MAX_MCP_BODY_BYTES: bound on a /mcp request body (a brain value is up to 4 MiB)
	DBMaxConns             int32 // OML_DB_MAX_CONNS
	// RecallConcurrency bounds the recalls that run at once on a replica;
	// the rest wait their turn (OML_RECALL_CONCURRENCY; 0: no bound, the
	// default with a remote embedder).
	RecallConcurrency int
	ShutdownTimeout   time.Duration // OML_SHUTDOWN_TIMEOUT
	// DrainDelay is how long a replica answers /readyz false on SIGTERM,
	// still serving, before it stops accepting (OML_DRAIN_DELAY): time for
	// a load balancer to take it out.
	DrainDelay time.Duration
	// MetricsListen, when set, serves /metrics on its own listener
	// instead of the main one (OML_METRICS_LISTEN).
	MetricsListen string
	// MetricsToken, when set and MetricsListen is not, serves /metrics on
	// the main listener to a bearer of this token (OML_METRICS_TOKEN, at
	// least 32 printable characters). With neither, /metrics is not served.
	MetricsToken  string
	LogLevel      slog.Level    // OML_LOG_LEVEL: debug, info, warn, error
	LogFormat     string        // OML_LOG_FORMAT: text or json
	MaxTextBytes  int           // OML_MAX_TEXT_BYTES: bound on a claim's text
	ServeTTL      time.Duration // OML_SERVE_TTL: how long a served item stays leased
	WebSessionTTL time.Duration // OML_WEB_SESSION_TTL: how long a browser's sign-in lasts
	// OML_READ_LOG_RETENTION, OML_IDEMPOTENCY_RETENTION: how long read-log
	// rows and idempotency records are kept (0: forever).
	ReadLogRetention     time.Duration
	IdempotencyRetention time.Duration
	QuotaRefresh         time.Duration // OML_QUOTA_REFRESH: how often a replica reads quota settings again
	// Self-service enrolment: OML_ENROL_TENANT names the tenant open to it
	// ("" closes it), OML_ENROL_PENDING_MAX and OML_ENROL_PENDING_TTL bound
	// the pending requests, OML_ENROL_PER_HOUR the requests one peer makes
	// an hour, OML_TRUST_PROXY the proxies whose X-Forwarded-For counts.
	EnrolTenant     string
	EnrolPendingMax int
	EnrolPendingTTL time.Duration
	EnrolPerHour    int
	TrustProxy      []netip.Prefix
	ReciprocalRate  float64       // OML_EVIDENCE_RECIPROCAL_RATE: the share of approvals that flags a reciprocal pair
	ClosureMax      int           // OML_REVIEW_CLOSURE_MAX: the largest lineage closure an independence check computes
	ExpirySweep     time.Duration // OML_EXPIRY_INTERVAL: how often held items and upload sessions are swept
	MaxUploadBytes  int64         // OML_MAX_UPLOAD_BYTES: the largest attachment (a tenant may set lower)
	MaxOpenUploads  int           // OML_MAX_OPEN_UPLOADS: open upload sessions per key
	UploadTTL       time.Duration // OML_UPLOAD_TTL: how long an upload session lives
	// UploadLeaseTTL is how long a part's writer holds its session: how
	// long a replica killed mid-part keeps the session from its next
	// writer (OML_UPLOAD_LEASE_TTL, 20s–1h; a part must be written
	// within it less 15 s).
	UploadLeaseTTL time.Duration
	// EventsPerWorkarea is OML_EVENTS_PER_WORKAREA: the feed events agents
	// may write in one workarea (signals, questions, answers).
	EventsPerWorkarea int64
	// InboxOpenMax is OML_INBOX_OPEN_MAX: the open questions and approvals
	// one identity may leave on the human per workarea.
	InboxOpenMax int

	EmbeddingsURL    string // OML_EMBEDDINGS_URL
	EmbeddingsModel  string // OML_EMBEDDINGS_MODEL
	EmbeddingsDim    int    // OML_EMBEDDINGS_DIM
	EmbeddingsAPIKey string // OML_EMBEDDINGS_API_KEY
}

// Defaults.
// DefaultRecallConcurrency is twice the CPUs this process may use
// (GOMAXPROCS, which follows a container's CPU limit), at least 4: the
// bound with the built-in embedder, sized for Postgres on the same
// machine, as `make run` has it. Load keeps it under half the pool. On 2
// cores, 16 recalls at once did about 0.8 of the work of 4 at a time
// (docs/BENCHMARKS.md, "Recalls a few at a time").
func DefaultRecallConcurrency() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// DefaultDBMaxConns is four connections per CPU this process may use
// (GOMAXPROCS), from 8 to 32: sized, like the recall bound, for Postgres
// on the same machine, where more backends than cores do less work. On 2
// cores a pool of 8 ran remember at 32 writers 1.2-1.3x faster than 20,
// at 0.4-0.6 of the p99, and serve + verdict within noise
// (docs/BENCHMARKS.md, "The pool's default size"). At most 32 keeps one
// replica to a third of a stock Postgres's 100 connections.
func DefaultDBMaxConns() int { return min(32, max(8, 4*runtime.GOMAXPROCS(0))) }

const (
	DefaultListen       = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxMCPBodyBytes leaves a 4 MiB brain value room for its
	// JSON-RPC envelope and some escaping.
	DefaultMaxMCPBodyBytes = 5 << 20
	DefaultMaxTextBytes    = 256 << 10
	// DefaultClosureMax bounds the lineage closure of one independence
	// check; an item whose closure is larger is never served (R2 fails
	// closed). MaxClosureMax is the highest value the setting takes.
	DefaultClosureMax = 10_000
	MaxClosureMax     = 1_000_000
	// DefaultMaxUploadBytes is 5 GiB.
	DefaultMaxUploadBytes = 5 << 30
	// DefaultEventsPerWorkarea and DefaultInboxOpenMax bound the feed and
	// the inbox (seed 002's event ceiling and open-items cap).
	DefaultEventsPerWorkarea = 100_000
	DefaultInboxOpenMax      = 20
)

// Load reads the configuration through getenv (os.Getenv in main, a map in
// tests). It validates what is present; [Config.RequireServe] checks what
// `serve` additionally needs.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:      getenv("OML_DATABASE_URL"),
		Listen:           or(getenv("OML_LISTEN"), DefaultListen),
		BlobStore:        getenv("OML_BLOB_STORE"),
		SigningKeyFile:   getenv("OML_SIGNING_KEY_FILE"),
		MasterKeyFile:    getenv("OML_MASTER_KEY_FILE"),
		AddressKeyFile:   getenv("OML_ADDRESS_KEY_FILE"),
		LogFormat:        or(getenv("OML_LOG_FORMAT"), "text"),
		EmbeddingsURL:    getenv("OML_EMBEDDINGS_URL"),
		EmbeddingsModel:  getenv("OML_EMBEDDINGS_MODEL"),
		EmbeddingsAPIKey: getenv("OML_EMBEDDINGS_API_KEY"),
	}
	var problems []error
	bad := func(name, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}

	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("OML_LISTEN", "want host:port, got %q", c.Listen)
	}
	c.PublicURL = strings.TrimRight(or(getenv("OML_PUBLIC_URL"), "http://"+c.Listen), "/")
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("OML_PUBLIC_URL", "want an absolute http(s) URL, got %q", c.PublicURL)
	}
	for _, o := range strings.Split(getenv("OML_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, strings.TrimRight(o, "/"))
		}
	}
	for _, f := range strings.Split(getenv("OML_PREVIOUS_MASTER_KEY_FILES"), ",") {
		switch f = strings.TrimSpace(f); {
		case f == "":
		case f == c.MasterKeyFile:
			bad("OML_PREVIOUS_MASTER_KEY_FILES", "names the current master key %s", f)
		case slices.Contains(c.PreviousMasterKeyFiles, f):
			bad("OML_PREVIOUS_MASTER_KEY_FILES", "names %s twice", f)
		default:
			c.PreviousMasterKeyFiles = append(c.PreviousMasterKeyFiles, f)
		}
	}
	if len(c.PreviousMasterKeyFiles) > 0 && c.AddressKeyFile == "" {
		bad("OML_PREVIOUS_MASTER_KEY_FILES", "set without OML_ADDRESS_KEY_FILE, content would change address; `oml-server rotate-master-key` writes both")
	}
	if c.DatabaseURL != "" {
		if _, err := url.Parse(c.DatabaseURL); err != nil && !strings.Contains(c.DatabaseURL, "=") {
			bad("OML_DATABASE_URL", "not a connection string")
		}
	}
	c.Replicas = intOr(getenv, "OML_REPLICAS", 1, bad)
	if c.Replicas < 1 {
		bad("OML_REPLICAS", "must be ≥ 1, got %d", c.Replicas)
	}
	c.MaxBodyBytes = int64(intOr(getenv, "OML_MAX_BODY_BYTES", DefaultMaxBodyBytes, bad))
	if c.MaxBodyBytes < 1024 {
		bad("OML_MAX_BODY_BYTES", "must be ≥ 1024, got %d", c.MaxBodyBytes)
	}
	c.MaxMCPBodyBytes = int64(intOr(getenv, "OML_MAX_MCP_BODY_BYTES", max(DefaultMaxMCPBodyBytes, int(c.MaxBodyBytes)), bad))
	if c.MaxMCPBodyBytes < c.MaxBodyBytes {
		bad("OML_MAX_MCP_BODY_BYTES", "must be ≥ OML_MAX_BODY_BYTES (%d), got %d", c.MaxBodyBytes, c.MaxMCPBodyBytes)
	}
	c.DBMaxConns = int32(intOr(getenv, "OML_DB_MAX_CONNS", DefaultDBMaxConns(), bad))
	if c.DBMaxConns < 2 {
		bad("OML_DB_MAX_CONNS", "must be ≥ 2, got %d", c.DBMaxConns)
	}
	// A remote embedder's answers would hold turns: no bound by default.
	// Recalls must leave the pool room for writes (and /readyz's ping), so
	// the bound stays under the pool's size, the default under half.
	recallDefault := max(1, min(DefaultRecallConcurrency(), int(c.DBMaxConns)/2))
	if c.EmbeddingsURL != "" {
		recallDefault = 0
	}
	c.RecallConcurrency = intOr(getenv, "OML_RECALL_CONCURRENCY", recallDefault, bad)
	if c.RecallConcurrency < 0 || c.RecallConcurrency > 1024 {
		bad("OML_RECALL_CONCURRENCY", "want 0 (no bound) to 1024, got %d", c.RecallConcurrency)
	} else if c.RecallConcurrency >= int(c.DBMaxConns) {
		bad("OML_RECALL_CONCURRENCY", "must be less than OML_DB_MAX_CONNS (%d), so that recalls leave writes a connection, got %d", c.DBMaxConns, c.RecallConcurrency)
	}
	c.ShutdownTimeout = durationOr(getenv, "OML_SHUTDOWN_TIMEOUT", 15*time.Second, bad)
	c.DrainDelay = 5 * time.Second
	if v := getenv("OML_DRAIN_DELAY"); v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 0 || d > 5*time.Minute {
			bad("OML_DRAIN_DELAY", "want a duration from 0 to 5m, such as 5s, got %q", v)
		} else {
			c.DrainDelay = d
		}
	}
	c.MetricsListen = getenv("OML_METRICS_LISTEN")
	c.MetricsToken = getenv("OML_METRICS_TOKEN")
	if t := c.MetricsToken; t != "" && (len(t) < 32 || strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0) {
		bad("OML_METRICS_TOKEN", "want at least 32 printable ASCII characters without spaces (such as the output of openssl rand -hex 32), got %d characters", len(t))
	}
	c.ServeTTL = durationOr(getenv, "OML_SERVE_TTL", 15*time.Minute, bad)
	c.WebSessionTTL = durationOr(getenv, "OML_WEB_SESSION_TTL", 12*time.Hour, bad)
	c.ReadLogRetention = retentionOr(getenv, "OML_READ_LOG_RETENTION", 365*24*time.Hour, bad)
	c.IdempotencyRetention = retentionOr(getenv, "OML_IDEMPOTENCY_RETENTION", 30*24*time.Hour, bad)
	c.QuotaRefresh = durationOr(getenv, "OML_QUOTA_REFRESH", 5*time.Second, bad)
	c.ReciprocalRate = 0.5
	if v := getenv("OML_EVIDENCE_RECIPROCAL_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 || r > 1 {
			bad("OML_EVIDENCE_RECIPROCAL_RATE", "want a share above 0 and at most 1, such as 0.5, got %q", v)
		} else {
			c.ReciprocalRate = r
		}
	}
	c.ClosureMax = intOr(getenv, "OML_REVIEW_CLOSURE_MAX", DefaultClosureMax, bad)
	if c.ClosureMax < 1 || c.ClosureMax > MaxClosureMax {
		bad("OML_REVIEW_CLOSURE_MAX", "must be between 1 and %d, got %d", MaxClosureMax, c.ClosureMax)
	}
	c.ExpirySweep = durationOr(getenv, "OML_EXPIRY_INTERVAL", 30*time.Second, bad)
	c.EnrolTenant = getenv("OML_ENROL_TENANT")
	c.EnrolPendingMax = intOr(getenv, "OML_ENROL_PENDING_MAX", 100, bad)
	if c.EnrolPendingMax < 1 {
		bad("OML_ENROL_PENDING_MAX", "must be ≥ 1, got %d", c.EnrolPendingMax)
	}
	c.EnrolPendingTTL = durationOr(getenv, "OML_ENROL_PENDING_TTL", 24*time.Hour, bad)
	c.EnrolPerHour = intOr(getenv, "OML_ENROL_PER_HOUR", 10, bad)
	if c.EnrolPerHour < 1 {
		bad("OML_ENROL_PER_HOUR", "must be ≥ 1, got %d", c.EnrolPerHour)
	}
	for _, v := range strings.Split(getenv("OML_TRUST_PROXY"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				bad("OML_TRUST_PROXY", "want comma-separated addresses or CIDR prefixes, got %q", v)
				continue
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.TrustProxy = append(c.TrustProxy, p.Masked())
	}
	c.MaxTextBytes = intOr(getenv, "OML_MAX_TEXT_BYTES", DefaultMaxTextBytes, bad)
	c.MaxUploadBytes = int64(intOr(getenv, "OML_MAX_UPLOAD_BYTES", DefaultMaxUploadBytes, bad))
	c.MaxOpenUploads = intOr(getenv, "OML_MAX_OPEN_UPLOADS", 16, bad)
	c.UploadTTL = durationOr(getenv, "OML_UPLOAD_TTL", 24*time.Hour, bad)
	c.UploadLeaseTTL = durationOr(getenv, "OML_UPLOAD_LEASE_TTL", 5*time.Minute, bad)
	if c.UploadLeaseTTL < 20*time.Second || c.UploadLeaseTTL > time.Hour {
		bad("OML_UPLOAD_LEASE_TTL", "must be from 20s to 1h, got %s", c.UploadLeaseTTL)
	}
	c.EventsPerWorkarea = int64(intOr(getenv, "OML_EVENTS_PER_WORKAREA", DefaultEventsPerWorkarea, bad))
	if c.EventsPerWorkarea < 1 {
		bad("OML_EVENTS_PER_WORKAREA", "must be ≥ 1, got %d", c.EventsPerWorkarea)
	}
	c.InboxOpenMax = intOr(getenv, "OML_INBOX_OPEN_MAX", DefaultInboxOpenMax, bad)
	if c.InboxOpenMax < 1 {
		bad("OML_INBOX_OPEN_MAX", "must be ≥ 1, got %d", c.InboxOpenMax)
	}
	if c.MaxTextBytes < 1 || int64(c.MaxTextBytes) > c.MaxBodyBytes {
		bad("OML_MAX_TEXT_BYTES", "must be between 1 and OML_MAX_BODY_BYTES (%d), got %d", c.MaxBodyBytes, c.MaxTextBytes)
	}
	if v := getenv("OML_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			bad("OML_LOG_LEVEL", "want debug, info, warn or error, got %q", v)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("OML_LOG_FORMAT", "want text or json, got %q", c.LogFormat)
	}
	if c.BlobStore != "" && !strings.HasPrefix(c.BlobStore, "file://") && !strings.HasPrefix(c.BlobStore, "s3://") {
		bad("OML_BLOB_STORE", "want file:///abs/dir or s3://bucket?endpoint=…, got %q", c.BlobStore)
	}
	c.EmbeddingsDim = intOr(getenv, "OML_EMBEDDINGS_DIM", 0, bad)
	if c.EmbeddingsURL != "" && (c.EmbeddingsModel == "" || c.EmbeddingsDim <= 0) {
		bad("OML_EMBEDDINGS_URL", "set OML_EMBEDDINGS_MODEL and a positive OML_EMBEDDINGS_DIM with it")
	}
	return c, errors.Join(problems...)
}

// RequireDatabase checks that a database URL is configured.
func (c Config) RequireDatabase() error {
	if c.DatabaseURL == "" {
		return errors.New("OML_DATABASE_URL is not set: give the Postgres connection string (make run sets it)")
	}
	return nil
}

// RequireServe checks everything `oml-server serve` needs.
func (c Config) RequireServe() error {
	var problems []error
	if err := c.RequireDatabase(); err != nil {
		problems = append(problems, err)
	}
	if c.SigningKeyFile == "" {
		problems = append(problems, errors.New("OML_SIGNING_KEY_FILE is not set: run `oml-server keygen --dir DIR` and source its output"))
	}
	if c.MasterKeyFile == "" {
		problems = append(problems, errors.New("OML_MASTER_KEY_FILE is not set: run `oml-server keygen --dir DIR` and source its output"))
	}
	if c.BlobStore == "" {
		problems = append(problems, errors.New("OML_BLOB_STORE is not set: file:///absolute/dir, or s3://bucket?endpoint=…&region=… for S3"))
	}
	return errors.Join(problems...)
}

// LogValue masks secrets: the database password and the embeddings API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("database_url", MaskURL(c.DatabaseURL)),
		slog.String("listen", c.Listen),
		slog.String("public_url", c.PublicURL),
		slog.Any("allowed_origins", c.AllowedOrigins),
		slog.String("blob_store", MaskURL(c.BlobStore)),
		slog.String("signing_key_file", c.SigningKeyFile),
		slog.String("master_key_file", c.MasterKeyFile),
		slog.Any("previous_master_key_files", c.PreviousMasterKeyFiles),
		slog.String("address_key_file", c.AddressKeyFile),
		slog.Int("replicas", c.Replicas),
		slog.Int64("max_body_bytes", c.MaxBodyBytes),
		slog.Int64("max_mcp_body_bytes", c.MaxMCPBodyBytes),
		slog.Int("db_max_conns", int(c.DBMaxConns)),
		slog.Int("recall_concurrency", c.RecallConcurrency),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Duration("drain_delay", c.DrainDelay),
		slog.String("metrics_listen", c.MetricsListen),
		slog.String("metrics_token", mask(c.MetricsToken)),
		slog.Int("max_text_bytes", c.MaxTextBytes),
		slog.Duration("serve_ttl", c.ServeTTL),
		slog.Duration("web_session_ttl", c.WebSessionTTL),
		slog.Duration("read_log_retention", c.ReadLogRetention),
		slog.Duration("idempotency_retention", c.IdempotencyRetention),
		slog.Duration("quota_refresh", c.QuotaRefresh),
		slog.String("enrol_tenant", c.EnrolTenant),
		slog.Int("enrol_pending_max", c.EnrolPendingMax),
		slog.Duration("enrol_pending_ttl", c.EnrolPendingTTL),
		slog.Int("trust_proxies", len(c.TrustProxy)),
		slog.Int("review_closure_max", c.ClosureMax),
		slog.Int64("max_upload_bytes", c.MaxUploadBytes),
		slog.Int("max_open_uploads", c.MaxOpenUploads),
		slog.Int64("events_per_workarea", c.EventsPerWorkarea),
		slog.Int("inbox_open_max", c.InboxOpenMax),
		slog.Duration("upload_ttl", c.UploadTTL),
		slog.Duration("upload_lease_ttl", c.UploadLeaseTTL),
		slog.Duration("expiry_interval", c.ExpirySweep),
		slog.String("embeddings_url", c.EmbeddingsURL),
		slog.String("embeddings_model", c.EmbeddingsModel),
		slog.Int("embeddings_dim", c.EmbeddingsDim),
		slog.String("embeddings_api_key", mask(c.EmbeddingsAPIKey)),
	)
}

// MaskURL hides the password of a URL (and of key=value DSNs).
func MaskURL(s string) string {
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for _, k := range []string{"password", "secret", "secret_key"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	fields := strings.Fields(s)
	for i, f := range fields {
		if strings.HasPrefix(f, "password=") {
			fields[i] = "password=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return "xxxxx"
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func durationOr(getenv func(string) string, name string, def time.Duration, bad func(string, string, ...any)) time.Duration {
	v := getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		bad(name, "want a positive duration such as 15s, got %q", v)
		return def
	}
	return d
}

// retentionOr reads a retention: a positive duration, or 0 to keep
// forever.
func retentionOr(getenv func(string) string, name string, def time.Duration, bad func(string, string, ...any)) time.Duration {
	v := getenv(name)
	if v == "0" {
		return 0
	}
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		bad(name, "want a duration such as 720h, or 0 to keep forever, got %q", v)
		return def
	}
	return d
}

func intOr(getenv func(string) string, name string, def int, bad func(string, string, ...any)) int {
	v := getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		bad(name, "want an integer, got %q", v)
		return def
	}
	return n
}
