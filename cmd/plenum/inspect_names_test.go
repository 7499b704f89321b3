package main

import (
	"bytes"
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Names stored before the store refused unsafe ones (or by a writer
// outside it) reach the terminal escaped: no escape sequence, bell,
// newline, tab or bidirectional override read from the database is
// printed as it is, every row stays on one line, and each name is shown
// quoted in Go's syntax, so that it can still be told apart and typed.
func TestInspect_PrintsStoredNamesEscaped(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, checkInspectEscapes)
}

func checkInspectEscapes(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, o inspectOptions, _ string) {
	t.Helper()
	ctx := context.Background()
	fillInspected(t, db, d, prefix)
	const (
		queue   = "esc\x1b]0;pwned\x07\x1b[31mRED"
		barrier = "nl\nq\tx"
		name    = "rlo\u202etxt.exe\u0085"
		host    = "h\x1b[2J\r"
	)
	names := migrations.NamesFor(prefix)
	for _, u := range []struct {
		stmt string
		arg  string
	}{
		{"UPDATE " + names.Items + " SET queue = ?", queue},
		{"UPDATE " + names.Barriers + " SET name = ?", barrier},
		{"UPDATE " + names.Processes + " SET name = ?", name},
		{"UPDATE " + names.Processes + " SET host = ?", host},
	} {
		if _, err := db.ExecContext(ctx, d.Rebind(u.stmt), u.arg); err != nil {
			t.Fatal(err)
		}
	}

	var out bytes.Buffer
	o.Prefix, o.Limit = prefix, 20
	if err := runInspect(ctx, &out, o); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Errorf("output holds %U:\n%s", r, strconv.Quote(s))
			break
		}
	}
	for _, n := range []string{queue, barrier, name, host} {
		q := strconv.Quote(n)
		if !strings.Contains(s, q) {
			t.Errorf("output does not show %s:\n%s", q, s)
		}
	}
}
