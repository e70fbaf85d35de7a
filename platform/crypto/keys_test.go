package crypto

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateAndLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "keys")
	sp, mp, err := GenerateKeyFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sp, mp} {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, err %v", p, st.Mode(), err)
		}
	}
	if _, err := LoadSigningKey(sp); err != nil {
		t.Fatal(err)
	}
	if k, err := LoadMasterKey(mp); err != nil || len(k) != 32 {
		t.Fatalf("master key: %v", err)
	}
	if _, _, err := GenerateKeyFiles(dir); err == nil {
		t.Fatal("GenerateKeyFiles overwrote existing keys")
	}
	if err := os.Chmod(mp, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMasterKey(mp); err == nil {
		t.Fatal("a world-readable master key was accepted")
	}
}
