package dialect_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
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
		if got := dialect.RebindNumbered(c.in, c.prefix); got != c.want {
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
		out := dialect.RebindNumbered(q, "$")
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
		if got := dialect.Placeholders(n); got != want {
			t.Errorf("Placeholders(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestIsConnectionLost(t *testing.T) {
	t.Parallel()
	lost := []error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		fmt.Errorf("wrapped: %w", driver.ErrBadConn), &net.OpError{Op: "read", Err: errors.New("reset")}}
	for _, err := range lost {
		if !dialect.IsConnectionLost(err) {
			t.Errorf("IsConnectionLost(%v) = false, want true", err)
		}
	}
	kept := []error{nil, errors.New("syntax error"), context.Canceled, context.DeadlineExceeded, sql.ErrNoRows}
	for _, err := range kept {
		if dialect.IsConnectionLost(err) {
			t.Errorf("IsConnectionLost(%v) = true, want false", err)
		}
	}
}

type named struct{ dialect.Dialect }

func (n named) Name() string { return "registry-test" }

func openNothing(string) (*sql.DB, error) { return nil, errors.New("no database") }

func TestRegistry_OneRegistrationPerName(t *testing.T) {
	t.Parallel()
	reg := dialect.Registration{Dialect: named{}, Open: openNothing, DSN: dialect.DSNForm{Example: "x", File: true}}
	dialect.Register(reg)
	d, err := dialect.Lookup("registry-test")
	if err != nil || d.Name() != "registry-test" {
		t.Fatalf("Lookup = %v, %v", d, err)
	}
	r, err := dialect.Registered("registry-test")
	if err != nil || r.Open == nil || !r.DSN.File || r.DSN.Example != "x" {
		t.Fatalf("Registered = %+v, %v", r, err)
	}
	if !slices.Contains(dialect.Names(), "registry-test") {
		t.Errorf("Names() = %v lacks registry-test", dialect.Names())
	}
	found := false
	for _, r := range dialect.Registrations() {
		found = found || r.Dialect.Name() == "registry-test"
	}
	if !found {
		t.Error("Registrations() lacks registry-test")
	}
	_, err = dialect.Lookup("no-such-database")
	if !errors.Is(err, dialect.ErrUnknownDialect) || !strings.Contains(err.Error(), "registry-test") {
		t.Fatalf("Lookup of an unknown name = %v, want ErrUnknownDialect listing the known ones", err)
	}
	if _, err := dialect.Registered("no-such-database"); !errors.Is(err, dialect.ErrUnknownDialect) {
		t.Fatalf("Registered of an unknown name = %v, want ErrUnknownDialect", err)
	}
	mustPanic := func(what string, r dialect.Registration) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		dialect.Register(r)
	}
	mustPanic("registering a name twice", reg)
	mustPanic("a nil dialect", dialect.Registration{Open: openNothing, DSN: dialect.DSNForm{Example: "x"}})
	other := reg
	other.Dialect = renamedTo{name: "registry-test-2"}
	other.Open = nil
	mustPanic("no Open", other)
	other.Open, other.DSN.Example = openNothing, ""
	mustPanic("no example DSN", other)
	other.Dialect, other.DSN.Example = renamedTo{}, "x"
	mustPanic("an empty name", other)
}

type renamedTo struct {
	dialect.Dialect
	name string
}

func (r renamedTo) Name() string { return r.name }

func TestColumnTypeString(t *testing.T) {
	t.Parallel()
	for ct := dialect.UUID; ct <= dialect.Time; ct++ {
		if ct.String() == "unknown" {
			t.Errorf("column type %d has no name", ct)
		}
	}
	if dialect.ColumnType(0).String() != "unknown" {
		t.Error("the zero column type has a name")
	}
}

func TestTableDDL(t *testing.T) {
	tb := dialect.Table{
		Name: "t",
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "note", Type: dialect.Text, Nullable: true},
		},
		PrimaryKey: []string{"id"},
	}
	colType := func(c dialect.Column) string { return strings.ToUpper(c.Type.String()) }
	want := "CREATE TABLE IF NOT EXISTS t (\n  id UUID NOT NULL,\n  note TEXT,\n  PRIMARY KEY (id)\n)"
	if got := dialect.TableDDL(tb, colType, false, ""); got != want {
		t.Errorf("TableDDL =\n%s\nwant\n%s", got, want)
	}
	got := dialect.TableDDL(tb, colType, true, " ENGINE=InnoDB")
	if !strings.Contains(got, "note TEXT NULL,") || !strings.HasSuffix(got, "\n) ENGINE=InnoDB") {
		t.Errorf("TableDDL with explicit NULL and options =\n%s", got)
	}
}

func TestInsertValues(t *testing.T) {
	if got, want := dialect.InsertValues("t", []string{"a", "b"}, "?, ?", 3), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)"; got != want {
		t.Errorf("InsertValues = %q, want %q", got, want)
	}
	if got := dialect.InsertValues("t", []string{"a"}, "?", 0); got != "INSERT INTO t (a) VALUES " {
		t.Errorf("InsertValues with no rows = %q", got)
	}
}

func TestIndexDDL(t *testing.T) {
	for _, tc := range []struct {
		ix   dialect.Index
		want string
	}{
		{dialect.Index{Name: "i", Columns: []string{"a", "b"}}, "CREATE INDEX IF NOT EXISTS i ON t (a, b)"},
		{dialect.Index{Name: "u", Columns: []string{"a"}, Unique: true}, "CREATE UNIQUE INDEX IF NOT EXISTS u ON t (a)"},
		{
			dialect.Index{Name: "p", Columns: []string{"a"}, Where: []dialect.Cond{{Column: "s", Value: "it's"}, {Column: "b", NotNull: true}}},
			"CREATE INDEX IF NOT EXISTS p ON t (a) WHERE s = 'it''s' AND b IS NOT NULL",
		},
		{
			dialect.Index{Name: "n", Columns: []string{"c", "id"}, Where: []dialect.Cond{{Column: "f", Null: true}}},
			"CREATE INDEX IF NOT EXISTS n ON t (c, id) WHERE f IS NULL",
		},
	} {
		if got := dialect.IndexDDL("t", tc.ix); got != tc.want {
			t.Errorf("IndexDDL(%+v) = %q, want %q", tc.ix, got, tc.want)
		}
	}
}

func TestIndex_ExcludesOnlyNullKeys(t *testing.T) {
	notNull := func(c string) dialect.Cond { return dialect.Cond{Column: c, NotNull: true} }
	for _, tc := range []struct {
		where []dialect.Cond
		want  bool
	}{
		{nil, false},
		{[]dialect.Cond{notNull("k")}, true},
		{[]dialect.Cond{notNull("k"), notNull("q")}, true},
		{[]dialect.Cond{notNull("other")}, false},
		{[]dialect.Cond{notNull("k"), {Column: "state", Value: "x"}}, false},
		{[]dialect.Cond{{Column: "k", Null: true}}, false},
		{[]dialect.Cond{{Column: "k", Value: "x"}}, false},
	} {
		ix := dialect.Index{Name: "i", Columns: []string{"q", "k"}, Unique: true, Where: tc.where}
		if got := ix.ExcludesOnlyNullKeys(); got != tc.want {
			t.Errorf("ExcludesOnlyNullKeys(%+v) = %v, want %v", tc.where, got, tc.want)
		}
	}
}

func TestClaimSpecValidate(t *testing.T) {
	good := dialect.ClaimSpec{Table: "t", Key: "id", Filter: "1 = 1", OrderBy: "id", Limit: 1, Set: "a = 1", Returning: []string{"id"}}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(good) = %v", err)
	}
	for name, change := range map[string]func(*dialect.ClaimSpec){
		"zero limit":   func(s *dialect.ClaimSpec) { s.Limit = 0 },
		"no table":     func(s *dialect.ClaimSpec) { s.Table = "" },
		"no key":       func(s *dialect.ClaimSpec) { s.Key = "" },
		"no set":       func(s *dialect.ClaimSpec) { s.Set = "" },
		"no filter":    func(s *dialect.ClaimSpec) { s.Filter = "" },
		"no order":     func(s *dialect.ClaimSpec) { s.OrderBy = "" },
		"no returning": func(s *dialect.ClaimSpec) { s.Returning = nil },
	} {
		s := good
		change(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
}

func TestClaimSpecCandidates(t *testing.T) {
	s := dialect.ClaimSpec{Table: "t", Key: "id", Filter: "q = ?", OrderBy: "p, id"}
	if got, want := s.Candidates(" LIMIT 5"), "SELECT id FROM t WHERE q = ? ORDER BY p, id LIMIT 5"; got != want {
		t.Errorf("Candidates = %q, want %q", got, want)
	}
}
