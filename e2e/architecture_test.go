package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/omlhub/oml"

type listedPackage struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t testing.TB) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
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

// violations lists the architecture rules pkgs break: no context depends on
// another (their tests included), the shared kernel depends on no context,
// and domain packages import the standard library and platform/{errs,ids,textsafe}
// only.
func violations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		own := contextOf(p.ImportPath)
		isPlatform := strings.HasPrefix(p.ImportPath, module+"/platform/")
		deps := slices.Concat(p.Deps, p.TestImports, p.XTestImports)
		for _, dep := range deps {
			if !strings.HasPrefix(dep, module+"/") {
				continue
			}
			other := contextOf(dep)
			switch {
			case isPlatform && other != "":
				out = append(out, fmt.Sprintf("platform → contexts: %s depends on %s", p.ImportPath, dep))
			case own != "" && other != "" && other != own:
				out = append(out, fmt.Sprintf("contexts/%s → contexts/%s: %s depends on %s", own, other, p.ImportPath, dep))
			}
		}
		if own != "" && strings.HasSuffix(p.ImportPath, "/internal/domain") {
			for _, imp := range p.Imports {
				if strings.Contains(imp, ".") && imp != module+"/platform/errs" && imp != module+"/platform/ids" && imp != module+"/platform/textsafe" {
					out = append(out, fmt.Sprintf("domain purity: %s imports %s", p.ImportPath, imp))
				}
			}
		}
	}
	return out
}

func TestArchitecture(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The checker itself catches each kind of violation.
func TestArchitectureCheckerCatches(t *testing.T) {
	t.Parallel()
	c := func(s string) string { return module + "/contexts/" + s }
	pkgs := []listedPackage{
		{ImportPath: c("admission/internal/app"), Deps: []string{c("access/internal/app")}},
		{ImportPath: c("admission/internal/app_test"), XTestImports: []string{c("lineage")}},
		{ImportPath: module + "/platform/journal", Deps: []string{c("access")}},
		{ImportPath: c("access/internal/domain"), Imports: []string{"github.com/jackc/pgx/v5"}},
		{ImportPath: c("access/internal/app"), Deps: []string{c("access/internal/domain"), module + "/platform/errs"}},
		{ImportPath: module + "/cmd/oml-server", Deps: []string{c("access"), c("admission")}},
	}
	got := violations(pkgs)
	if len(got) != 4 {
		t.Fatalf("violations = %d, want 4:\n%s", len(got), strings.Join(got, "\n"))
	}
}
