package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/omlhub/oml/contexts/attachments"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/crypto"
	"github.com/omlhub/oml/platform/journal"
)

// keys is the deployment's key material.
type keys struct {
	signing ed25519.PrivateKey
	masterKeys
}

// masterKeys are the attachments' keys: the master key, and during and
// after a rotation the previous ones and the kept address key
// (docs/OPERATIONS.md, Rotating keys).
type masterKeys struct {
	master   []byte
	previous [][]byte
	address  []byte
}

// loadKeys reads the key files cfg names.
func loadKeys(cfg config.Config) (keys, error) {
	signing, err := crypto.LoadSigningKey(cfg.SigningKeyFile)
	if err != nil {
		return keys{}, fmt.Errorf("signing key: %w", err)
	}
	m, err := loadMasterKeys(cfg)
	return keys{signing: signing, masterKeys: m}, err
}

func loadMasterKeys(cfg config.Config) (masterKeys, error) {
	var k masterKeys
	var err error
	if cfg.MasterKeyFile == "" {
		return k, errors.New("OML_MASTER_KEY_FILE is not set")
	}
	if k.master, err = crypto.LoadMasterKey(cfg.MasterKeyFile); err != nil {
		return k, fmt.Errorf("master key: %w", err)
	}
	for _, f := range cfg.PreviousMasterKeyFiles {
		m, err := crypto.LoadMasterKey(f)
		if err != nil {
			return k, fmt.Errorf("previous master key: %w", err)
		}
		k.previous = append(k.previous, m)
	}
	if cfg.AddressKeyFile != "" {
		if k.address, err = crypto.LoadMasterKey(cfg.AddressKeyFile); err != nil {
			return k, fmt.Errorf("address key: %w", err)
		}
	}
	return k, nil
}

// rotateMasterKey writes a new master key beside the current one's
// address key and prints the environment that rolls the replicas onto
// it: the new key wraps, the current one joins the previous ones.
func rotateMasterKey(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rotate-master-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory to write the new master.key (and address.key) into (created 0700)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("rotate-master-key: --dir is required")
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	cur, err := loadMasterKeys(cfg)
	if err != nil {
		return fmt.Errorf("rotate-master-key: %w", err)
	}
	// The address key stays what it is: kept in its file, or derived from
	// the master key being retired and written beside the new one.
	var address []byte
	if cur.address == nil {
		if address, err = attachments.AddressKey(cur.master); err != nil {
			return err
		}
	}
	masterPath, addressPath, err := crypto.RotateMasterKey(*dir, address)
	if err != nil {
		return fmt.Errorf("rotate-master-key: %w", err)
	}
	if addressPath == "" {
		if addressPath, err = filepath.Abs(cfg.AddressKeyFile); err != nil {
			return err
		}
	}
	var previous []string
	for _, f := range append([]string{cfg.MasterKeyFile}, cfg.PreviousMasterKeyFiles...) {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		if strings.Contains(abs, ",") {
			return fmt.Errorf("rotate-master-key: %s: a key file path with a comma cannot go in OML_PREVIOUS_MASTER_KEY_FILES; move it", abs)
		}
		previous = append(previous, abs)
	}
	fmt.Fprintf(stdout, "OML_MASTER_KEY_FILE=%s\nOML_PREVIOUS_MASTER_KEY_FILES=%s\nOML_ADDRESS_KEY_FILE=%s\n",
		masterPath, strings.Join(previous, ","), addressPath)
	return nil
}

// rewrap moves the stored data keys to the current master key while the
// servers keep serving, and prints the report as JSON; it fails when
// keys remain under a previous master key or open under none.
func rewrap(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rewrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "only count the data keys not under the current master key")
	batch := fs.Int("batch", 500, "data keys per transaction")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, db, err := currentDatabase(ctx, getenv, "rewrap")
	if err != nil {
		return err
	}
	defer db.Close()
	k, err := loadMasterKeys(cfg)
	if err != nil {
		return fmt.Errorf("rewrap: %w", err)
	}
	rep, err := attachments.Rewrap(ctx, attachments.RewrapDeps{
		DB: db, Journal: journal.New(db, nil), MasterKey: k.master, PreviousMasterKeys: k.previous, AddressKey: k.address,
	}, *batch, *check)
	if err != nil {
		return fmt.Errorf("rewrap: %w", err)
	}
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		return err
	}
	if n := rep.Unreadable.Blobs + rep.Unreadable.Sessions; n > 0 {
		return fmt.Errorf("rewrap: %d data keys open under no configured master key: is a previous key missing from OML_PREVIOUS_MASTER_KEY_FILES?", n)
	}
	if n := rep.Remaining.Blobs + rep.Remaining.Sessions; n > 0 {
		if *check {
			return fmt.Errorf("rewrap: %d data keys are still under a previous master key: run `oml-server rewrap`", n)
		}
		return fmt.Errorf("rewrap: %d data keys are still under a previous master key after %d rounds: is every replica on the new OML_MASTER_KEY_FILE?", n, rep.Rounds)
	}
	return nil
}
