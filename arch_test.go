package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/simjecture/simjecture"

// allowed lists, for each top-level package, the project packages it may
// import directly: main → tui → engine → {sandbox, provider, store};
// main → installer (installer may use sandbox and provider). docs/architecture.md
// states the same rule.
var allowed = map[string][]string{
	"main":      {"tui", "engine", "sandbox", "provider", "store", "installer"},
	"tui":       {"engine"},
	"engine":    {"sandbox", "provider", "store"},
	"installer": {"sandbox", "provider"},
	"sandbox":   {},
	"provider":  {},
	"store":     {},
	"e2e":       {},
}

// uiOnly are modules only main and tui may import.
var uiOnly = []string{"github.com/charmbracelet/"}

func topLevel(pkg string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	if rest == "" {
		return "main"
	}
	return strings.SplitN(rest, "/", 2)[0]
}

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		path := strings.Fields(p.ImportPath)[0] // "pkg [pkg.test]" for test variants
		if !strings.HasPrefix(path, module) || strings.HasSuffix(path, ".test") {
			continue
		}
		checked++
		checkImports(t, topLevel(path), path, p.Imports)
	}
	if checked < 7 {
		t.Fatalf("checked only %d packages", checked)
	}
}

func checkImports(t *testing.T, from, path string, imports []string) {
	t.Helper()
	ok, known := allowed[from]
	if !known {
		t.Errorf("package %s is outside the design's top-level folders", path)
		return
	}
	for _, imp := range imports {
		if strings.HasPrefix(imp, module) {
			to := topLevel(imp)
			if to != from && !slices.Contains(ok, to) {
				t.Errorf("%s imports %s: %s may not depend on %s", path, imp, from, to)
			}
		}
		for _, ui := range uiOnly {
			if strings.HasPrefix(imp, ui) && from != "main" && from != "tui" {
				t.Errorf("%s imports %s: only main and tui may use the UI toolkit", path, imp)
			}
		}
	}
}
