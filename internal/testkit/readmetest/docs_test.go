package readmetest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, three levels above this package.
const root = "../../.."

// pages are the README and every page under docs/.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no pages under docs/: %v", err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

var (
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code    = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	goRun   = regexp.MustCompile(`go run (\./[^\s'"]+)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// anchor is the fragment a heading gets where the pages are shown:
// lower case, spaces as hyphens, punctuation other than hyphens dropped.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every relative link of the README and docs/ names a file that exists
// and, with a fragment, a heading of that file: a page moved or a section
// renamed breaks the test, not the reader.
func TestDocs_LinksResolve(t *testing.T) {
	t.Parallel()
	for _, page := range pages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		prose := code.ReplaceAllString(string(text), "")
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				if _, statErr := os.Stat(path); statErr != nil {
					t.Errorf("%s links to %s, which does not exist", rel(page), target)
				}
				continue
			}
			if frag == "" {
				continue
			}
			found := false
			for _, h := range heading.FindAllStringSubmatch(string(body), -1) {
				if anchor(h[1]) == frag {
					found = true
				}
			}
			if !found {
				t.Errorf("%s links to %s, but %s has no heading #%s", rel(page), target, rel(path), frag)
			}
		}
	}
}

// Every `go run ./path` a page shows runs a directory that exists, from
// the repository's root or from the module directory the command first
// changes into (`cd bench/river && go run .`).
func TestDocs_GoRunPathsExist(t *testing.T) {
	t.Parallel()
	for _, page := range pages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(text), "\n") {
			dir := root
			if _, after, ok := strings.Cut(line, "cd "); ok {
				sub, _, _ := strings.Cut(after, " ")
				if _, err := os.Stat(filepath.Join(root, sub)); err == nil {
					dir = filepath.Join(root, sub)
				}
			}
			for _, m := range goRun.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".,;:)`")
				if p == "./..." || p == "." {
					continue
				}
				if st, err := os.Stat(filepath.Join(dir, p)); err != nil || !st.IsDir() {
					t.Errorf("%s runs go run %s, which is no directory", rel(page), p)
				}
			}
		}
	}
}

func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}
