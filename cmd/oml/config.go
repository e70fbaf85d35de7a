package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// configHint names the config file in messages.
const configHint = "~/.config/oml/config.toml"

// fileConfig is what the config file may set: the server's URL and the
// API key, as `url = "…"` and `api_key = "…"` lines (a TOML subset).
type fileConfig struct {
	URL, Key string
}

// configPath is $XDG_CONFIG_HOME/oml/config.toml, else
// $HOME/.config/oml/config.toml ("" when neither is set).
func configPath(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "oml", "config.toml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "oml", "config.toml")
	}
	return ""
}

// loadConfig reads the config file; a missing one is an empty config. It
// holds a key, so a file others may read or write is refused, not used.
func loadConfig(path string) (fileConfig, error) {
	var c fileConfig
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("config %s holds an API key but its mode is %04o: run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return c, fmt.Errorf("config %s:%d: want name = \"value\"", path, n)
		}
		v, err := strconv.Unquote(strings.TrimSpace(value))
		if err != nil {
			return c, fmt.Errorf("config %s:%d: the value must be a quoted string", path, n)
		}
		switch strings.TrimSpace(name) {
		case "url":
			c.URL = v
		case "api_key":
			c.Key = v
		default:
			return c, fmt.Errorf("config %s:%d: unknown setting %q (url, api_key)", path, n, strings.TrimSpace(name))
		}
	}
	return c, sc.Err()
}
