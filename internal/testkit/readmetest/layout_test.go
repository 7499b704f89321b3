package readmetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var layoutPath = regexp.MustCompile("`([a-z0-9/._-]+)`")

// The README's Layout section names every package of the repository,
// the separate modules' included, each on a row that says its job: a
// package added or moved without its row fails here.
func TestLayout_NamesEveryPackage(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Layout\n")
	if !ok {
		t.Fatal("README has no Layout section")
	}
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range layoutPath.FindAllStringSubmatch(first, -1) {
			if m[1] != "go.mod" { // "(own `go.mod`)" marks a module
				named[strings.TrimSuffix(m[1], "/")] = true
			}
		}
	}
	for _, pkg := range packages(t) {
		if !named[pkg] {
			t.Errorf("the README's Layout section has no row for %s", pkg)
		}
		delete(named, pkg)
	}
	for p := range named {
		t.Errorf("the README's Layout section names %s, which holds no package", p)
	}
}

// packages lists the directories below the root that hold Go source other
// than tests, as slash paths from the root.
func packages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		seen[filepath.ToSlash(dir)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	return out
}
