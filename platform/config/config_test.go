package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.PublicURL != "http://"+DefaultListen || c.Replicas != 1 || c.MaxBodyBytes != DefaultMaxBodyBytes {
		t.Fatalf("defaults: %+v", c)
	}
	if err := c.RequireServe(); err == nil {
		t.Fatal("RequireServe accepted an empty configuration")
	}
	if n := c.DBMaxConns; n != int32(DefaultDBMaxConns()) || n < 8 || n > 32 {
		t.Fatalf("pool size %d", n)
	}
	if c.RecallConcurrency != min(DefaultRecallConcurrency(), DefaultDBMaxConns()/2) || c.RecallConcurrency < 4 {
		t.Fatalf("recall concurrency %d with the built-in embedder", c.RecallConcurrency)
	}
	remote, err := Load(env(map[string]string{"OML_EMBEDDINGS_URL": "http://x", "OML_EMBEDDINGS_MODEL": "m", "OML_EMBEDDINGS_DIM": "8"}))
	if err != nil || remote.RecallConcurrency != 0 {
		t.Fatalf("recall concurrency with a remote embedder: %d, %v (want no bound)", remote.RecallConcurrency, err)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]string{
		"listen":                   {"OML_LISTEN": "8080"},
		"replicas":                 {"OML_REPLICAS": "zero"},
		"replicas0":                {"OML_REPLICAS": "0"},
		"public url":               {"OML_PUBLIC_URL": "ftp://x"},
		"blob store":               {"OML_BLOB_STORE": "/tmp/x"},
		"log level":                {"OML_LOG_LEVEL": "loud"},
		"shutdown":                 {"OML_SHUTDOWN_TIMEOUT": "-1s"},
		"embeddings":               {"OML_EMBEDDINGS_URL": "http://x"},
		"drain":                    {"OML_DRAIN_DELAY": "6m"},
		"recall concurrency":       {"OML_RECALL_CONCURRENCY": "-1"},
		"recall concurrency high":  {"OML_RECALL_CONCURRENCY": "1025"},
		"recall concurrency pool":  {"OML_RECALL_CONCURRENCY": "20"},
		"lease":                    {"OML_UPLOAD_LEASE_TTL": "5s"},
		"token":                    {"OML_METRICS_TOKEN": "short"},
		"token ws":                 {"OML_METRICS_TOKEN": "0123456789abcdef 0123456789abcdef"},
		"previous without address": {"OML_MASTER_KEY_FILE": "/k/new", "OML_PREVIOUS_MASTER_KEY_FILES": "/k/old"},
		"previous is current": {"OML_MASTER_KEY_FILE": "/k/new", "OML_PREVIOUS_MASTER_KEY_FILES": "/k/old,/k/new",
			"OML_ADDRESS_KEY_FILE": "/k/address"},
		"previous twice": {"OML_MASTER_KEY_FILE": "/k/new", "OML_PREVIOUS_MASTER_KEY_FILES": "/k/old, /k/old",
			"OML_ADDRESS_KEY_FILE": "/k/address"},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := Load(env(m)); err == nil {
				t.Fatalf("Load(%v) accepted", m)
			}
		})
	}
}

func TestLoadRotation(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"OML_MASTER_KEY_FILE": "/k/new", "OML_PREVIOUS_MASTER_KEY_FILES": " /k/old ,, /k/older",
		"OML_ADDRESS_KEY_FILE": "/k/address"}))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.PreviousMasterKeyFiles) != "[/k/old /k/older]" || c.AddressKeyFile != "/k/address" {
		t.Fatalf("rotation files: %q %q", c.PreviousMasterKeyFiles, c.AddressKeyFile)
	}
}

func TestSecretsMasked(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{
		"OML_DATABASE_URL":       "postgres://oml:hunter2@127.0.0.1:5432/oml",
		"OML_EMBEDDINGS_URL":     "http://emb",
		"OML_EMBEDDINGS_MODEL":   "m",
		"OML_EMBEDDINGS_DIM":     "8",
		"OML_EMBEDDINGS_API_KEY": "sk-secret",
		"OML_METRICS_TOKEN":      "metrics-secret-0123456789abcdef0123",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", "config", c)
	out := b.String()
	for _, secret := range []string{"hunter2", "sk-secret", "metrics-secret"} {
		if strings.Contains(out, secret) {
			t.Fatalf("log leaks %q: %s", secret, out)
		}
	}
	if got := MaskURL("host=x password=hunter2 user=u"); strings.Contains(got, "hunter2") {
		t.Fatal(fmt.Sprint("DSN leaks: ", got))
	}
}
