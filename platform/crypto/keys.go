// Package crypto holds the deployment's key material: the Ed25519 key that
// signs submission envelopes and the master key from which the key that
// wraps attachment data keys is derived (and, after a rotation, the
// address key kept from the first master key).
package crypto

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File names written by [GenerateKeyFiles].
const (
	SigningKeyFile = "signing.key"
	MasterKeyFile  = "master.key"
	AddressKeyFile = "address.key"
	masterKeyLen   = 32
)

// GenerateKeyFiles writes a fresh signing key and master key into dir
// (created 0700; files 0600) and returns their absolute paths. Existing
// files are never overwritten.
func GenerateKeyFiles(dir string) (signingPath, masterPath string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	signingPath = filepath.Join(dir, SigningKeyFile)
	masterPath = filepath.Join(dir, MasterKeyFile)
	for _, p := range []string{signingPath, masterPath} {
		if _, err := os.Stat(p); err == nil {
			return "", "", fmt.Errorf("%s exists; refusing to overwrite key material", p)
		}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", "", err
	}
	if err := writeNew(signingPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return "", "", err
	}
	master := make([]byte, masterKeyLen)
	if _, err := rand.Read(master); err != nil {
		return "", "", err
	}
	if err := writeNew(masterPath, []byte(base64.StdEncoding.EncodeToString(master)+"\n")); err != nil {
		// Never leave half a key pair: a re-run would refuse to overwrite it.
		_ = os.Remove(signingPath)
		return "", "", err
	}
	return signingPath, masterPath, nil
}

// RotateMasterKey writes a fresh master.key into dir (created 0700) and,
// when addressKey is not nil, address.key holding it; it returns their
// absolute paths (address "" when not written). Existing files are never
// overwritten, and a failure leaves neither.
func RotateMasterKey(dir string, addressKey []byte) (masterPath, addressPath string, err error) {
	if addressKey != nil && len(addressKey) != masterKeyLen {
		return "", "", fmt.Errorf("address key must be %d bytes", masterKeyLen)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	masterPath = filepath.Join(dir, MasterKeyFile)
	if addressKey != nil {
		addressPath = filepath.Join(dir, AddressKeyFile)
	}
	for _, p := range []string{masterPath, addressPath} {
		if _, err := os.Stat(p); p != "" && err == nil {
			return "", "", fmt.Errorf("%s exists; refusing to overwrite key material", p)
		}
	}
	master := make([]byte, masterKeyLen)
	if _, err := rand.Read(master); err != nil {
		return "", "", err
	}
	if err := writeNew(masterPath, []byte(base64.StdEncoding.EncodeToString(master)+"\n")); err != nil {
		return "", "", err
	}
	if addressKey != nil {
		if err := writeNew(addressPath, []byte(base64.StdEncoding.EncodeToString(addressKey)+"\n")); err != nil {
			_ = os.Remove(masterPath)
			return "", "", err
		}
	}
	return masterPath, addressPath, nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// LoadSigningKey reads a PKCS#8 PEM Ed25519 private key.
func LoadSigningKey(path string) (ed25519.PrivateKey, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM PRIVATE KEY", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return priv, nil
}

// LoadMasterKey reads a 32-byte base64 key file: a master key, or the
// address key a rotation writes.
func LoadMasterKey(path string) ([]byte, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != masterKeyLen {
		return nil, fmt.Errorf("%s: want %d base64-encoded bytes", path, masterKeyLen)
	}
	return key, nil
}

// readPrivate reads a key file and refuses one that others may read.
func readPrivate(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("key file %s does not exist: run `oml-server keygen --dir DIR`", path)
		}
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %v; want 0600", path, st.Mode().Perm())
	}
	return os.ReadFile(path)
}
