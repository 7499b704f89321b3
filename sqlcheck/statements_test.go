package sqlcheck

import (
	"slices"
	"testing"
)

func TestNormalize_CollapsesBatchesPrefixesAndCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"INSERT INTO pc1a2b3c4d_items (a, b) VALUES ($1, $2), ($3, $4), ($5, $6) ON CONFLICT DO NOTHING",
			"INSERT INTO plenum_items (a, b) VALUES ($1, $1) ON CONFLICT DO NOTHING"},
		{"INSERT INTO t (a, b) VALUES (?, UTC_TIMESTAMP(6)), (?, UTC_TIMESTAMP(6))",
			"INSERT INTO t (a, b) VALUES (?, UTC_TIMESTAMP(6))"},
		{"UPDATE t SET x = 1 WHERE id IN (?, ?, ?) AND q IN (?)", "UPDATE t SET x = 1 WHERE id IN (?) AND q IN (?)"},
		{"SELECT a FROM t WHERE (id, tok) IN (($1, $2), ($3, $4))", "SELECT a FROM t WHERE (id, tok) IN (($1, $1))"},
		{"SELECT id FROM t ORDER BY id LIMIT 37 FOR UPDATE SKIP LOCKED", "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"},
		{"SELECT DATE_ADD(UTC_TIMESTAMP(6), INTERVAL -3600000000 MICROSECOND)", "SELECT DATE_ADD(UTC_TIMESTAMP(6), INTERVAL 1 MICROSECOND)"},
		// Different groups stay; quotes are not looked into.
		{"VALUES (1, 2), (1, 3)", "VALUES (1, 2), (1, 3)"},
		{"SELECT '(a), (a)', (1), (1)", "SELECT '(a), (a)', (1)"},
		{"CREATE TABLE IF NOT EXISTS pl0123abcd_locks (name varchar(255) NOT NULL PRIMARY KEY)", "CREATE TABLE IF NOT EXISTS plenum_locks (name varchar(255) NOT NULL PRIMARY KEY)"},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestSplitFile(t *testing.T) {
	t.Parallel()
	got := SplitFile("-- header; not a statement\n-- +goose Up\n\nCREATE TABLE a (x text DEFAULT ';');\n\nINSERT INTO a VALUES ($$;$$);\nSELECT 1")
	want := []string{"CREATE TABLE a (x text DEFAULT ';')", "INSERT INTO a VALUES ($$;$$)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("SplitFile = %q, want %q", got, want)
	}
}
