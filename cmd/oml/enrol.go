package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// enrol runs `oml enrol --reason TEXT`: asks the server (--url) to let this
// agent in, waits while an admin decides in the inbox, and on approval
// stores the URL and the key in the config file at mode 0600, so the next
// command needs no environment.
func (c *cli) enrol(ctx context.Context, args []string) error {
	fs := c.flags("enrol", "--reason TEXT | --token PENDING_TOKEN [--force]")
	reason := fs.String("reason", "", "one line, under 200 characters: who you are and why you ask")
	resume := fs.String("token", "", "wait again on a request already made, with the pending token it gave")
	force := fs.Bool("force", false, "replace a key already in the config file")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if (*reason == "") == (*resume == "") {
		return errors.New("enrol: give --reason (a new request) or --token (wait on one already made)")
	}
	if c.configFile == "" {
		return errors.New("enrol: no config file to store the key in: set HOME or XDG_CONFIG_HOME")
	}
	if existing, err := loadConfig(c.configFile); err != nil {
		return err
	} else if existing.Key != "" && !*force {
		return fmt.Errorf("enrol: %s holds a key already; pass --force to replace it", c.configFile)
	}
	base, err := baseURL(c.url)
	if err != nil {
		return err
	}
	var req struct {
		RequestID string    `json:"request_id"`
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if req.Token = *resume; req.Token == "" {
		anon := &client{base: base, http: &http.Client{}}
		if err := anon.do(ctx, http.MethodPost, "/v1/enrol", map[string]string{"reason": *reason}, &req); err != nil {
			return err
		}
		// The token is the key-to-be: if this command stops before the
		// decision, it is the way back (--token).
		fmt.Fprintf(c.stderr, "enrolment request %s is waiting for an admin's decision (until %s)\n"+
			"if this stops first, wait again with: oml --url %s enrol --token %s\n",
			req.RequestID, req.ExpiresAt.Local().Format(time.RFC3339), base, req.Token)
	}
	pending := &client{base: base, key: req.Token, http: &http.Client{}}
	for {
		var st struct {
			Status string `json:"status"`
			KeyID  string `json:"key_id"`
			Note   string `json:"note"`
		}
		if err := pending.do(ctx, http.MethodGet, "/v1/enrol/status?wait=30", nil, &st); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("enrol: gave up waiting (oml enrol --token resumes): %w", ctx.Err())
			}
			return err
		}
		switch st.Status {
		case "approved":
			if err := writeConfig(c.configFile, base, req.Token); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "approved: key %s stored in %s\n", st.KeyID, c.configFile)
			return nil
		case "refused":
			if st.Note != "" {
				return fmt.Errorf("enrol: the request was refused: %s", st.Note)
			}
			return errors.New("enrol: the request was refused")
		}
	}
}

// writeConfig stores url and key in path (mode 0600, its directory 0700),
// replacing what was there; written to a temporary file first, so a crash
// leaves the old file or the new one.
func writeConfig(path, url, key string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	body := fmt.Sprintf("# written by oml enrol\nurl = %s\napi_key = %s\n", strconv.Quote(url), strconv.Quote(key))
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.toml")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if _, err := tmp.WriteString(body); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
