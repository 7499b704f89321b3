package dialect_test

import (
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

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
