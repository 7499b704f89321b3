package sqlkit_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

func TestRebindNumbered(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, prefix, want string }{
		{"SELECT 1", "$", "SELECT 1"},
		{"a = ? AND b = ?", "$", "a = $1 AND b = $2"},
		{"a = ? AND b = '?' AND c = ?", "$", "a = $1 AND b = '?' AND c = $2"},
		{`a = "we?ird" AND b = ?`, ":", `a = "we?ird" AND b = :1`},
		{"a = 'it''s ?' AND b = ?", "$", "a = 'it''s ?' AND b = $1"},
		{"a = ? -- what?\nAND b = ?", "$", "a = $1 -- what?\nAND b = $2"},
		{"a = 'unterminated ?", "$", "a = 'unterminated ?"},
		{"a = ?", ":", "a = :1"},
	}
	for _, c := range cases {
		if got := sqlkit.RebindNumbered(c.in, c.prefix); got != c.want {
			t.Errorf("RebindNumbered(%q, %q) = %q, want %q", c.in, c.prefix, got, c.want)
		}
	}
}

func FuzzRebindNumbered(f *testing.F) {
	for _, s := range []string{"a = ? AND b = '?'", `"x?" ?`, "-- ?\n?", "'", "??"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if strings.Contains(q, "$") || followedByDigit.MatchString(q) {
			t.Skip() // the mapping back would be ambiguous
		}
		out := sqlkit.RebindNumbered(q, "$")
		// Putting '?' back for every $N gives the input again, and the
		// numbers run 1, 2, 3, ... in order.
		next := 1
		back := numbered.ReplaceAllStringFunc(out, func(m string) string {
			if m != fmt.Sprintf("$%d", next) {
				t.Fatalf("placeholder %s out of order in %q", m, out)
			}
			next++
			return "?"
		})
		if back != q {
			t.Fatalf("RebindNumbered(%q) = %q, which does not map back", q, out)
		}
	})
}

var (
	numbered        = regexp.MustCompile(`\$[0-9]+`)
	followedByDigit = regexp.MustCompile(`\?[0-9]`)
)

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{-1: "", 0: "", 1: "?", 3: "?, ?, ?"} {
		if got := sqlkit.Placeholders(n); got != want {
			t.Errorf("Placeholders(%d) = %q, want %q", n, got, want)
		}
	}
}
