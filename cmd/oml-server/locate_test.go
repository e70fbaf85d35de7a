package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// access.Module.Locate resolves a workarea with no caller and no access
// check, for operator commands that hold the database's credentials. It
// must never be reached from a request: only this command's admin.go
// calls it.
func TestLocateOnlyInOperatorCommands(t *testing.T) {
	call := regexp.MustCompile(`\.Locate\(`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "var" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if call.Match(src) && filepath.ToSlash(path) != "../../cmd/oml-server/admin.go" && !strings.HasPrefix(filepath.ToSlash(path), "../../contexts/access/") {
			t.Errorf("%s calls Locate; only oml-server's operator commands (admin.go) may", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
