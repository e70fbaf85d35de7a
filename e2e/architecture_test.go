package e2e

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/omlhub/oml"

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", module+"/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// contextOf returns the bounded context a package belongs to, or "".
func contextOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/contexts/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// Contexts talk only through ports wired in cmd/oml-server: no context
// depends on another, and the shared kernel depends on none. Domain
// packages depend on the standard library and platform/{errs,ids} only.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		own := contextOf(p.ImportPath)
		isPlatform := strings.HasPrefix(p.ImportPath, module+"/platform/")
		isDomain := strings.Contains(p.ImportPath, "/internal/domain")
		for _, dep := range p.Deps {
			if !strings.HasPrefix(dep, module+"/") {
				continue
			}
			other := contextOf(dep)
			switch {
			case isPlatform && other != "":
				t.Errorf("platform → contexts: %s depends on %s", p.ImportPath, dep)
			case own != "" && other != "" && other != own:
				t.Errorf("contexts/%s → contexts/%s: %s depends on %s", own, other, p.ImportPath, dep)
			}
		}
		if isDomain && own != "" {
			for _, imp := range p.Imports {
				if strings.Contains(imp, ".") && imp != module+"/platform/errs" && imp != module+"/platform/ids" {
					t.Errorf("domain purity: %s imports %s", p.ImportPath, imp)
				}
			}
		}
	}
}
