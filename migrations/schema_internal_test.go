package migrations

import (
	"context"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// Every change of every version sets exactly one step, with what that
// step needs; versions are numbered 1, 2, ... up to LatestVersion.
func TestAll_ChangesAreWellFormed(t *testing.T) {
	t.Parallel()
	all := All(DefaultPrefix)
	if len(all) != LatestVersion {
		t.Fatalf("%d versions, LatestVersion is %d", len(all), LatestVersion)
	}
	for i, m := range all {
		if m.Version != i+1 || m.Name == "" || len(m.Changes) == 0 {
			t.Errorf("version %d: number %d, name %q, %d changes", i+1, m.Version, m.Name, len(m.Changes))
		}
		for j, c := range m.Changes {
			if err := c.validate(); err != nil {
				t.Errorf("version %d change %d: %v", m.Version, j+1, err)
			}
			if !strings.HasPrefix(c.table(), DefaultPrefix) {
				t.Errorf("version %d change %d works on %q, outside the prefix", m.Version, j+1, c.table())
			}
		}
	}
}

func TestChange_Validate(t *testing.T) {
	t.Parallel()
	ix := &dialect.Index{Name: "i", Columns: []string{"a"}}
	for _, c := range []struct {
		change Change
		want   string
	}{
		{Change{}, "exactly one"},
		{Change{Table: &dialect.Table{Name: "t"}, Index: ix, IndexTable: "t"}, "exactly one"},
		{Change{Index: ix}, "needs IndexTable"},
		{Change{DropIndex: ix}, "needs IndexTable"},
		{Change{Column: &dialect.Column{Name: "c", Nullable: true}}, "needs ColumnTable"},
		{Change{Column: &dialect.Column{Name: "c"}, ColumnTable: "t"}, "must be nullable"},
		{Change{Data: &DataStep{Up: func(dialect.Schema) []string { return nil }}}, "needs Up and Down"},
	} {
		if err := c.change.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate(%+v) = %v, want %q", c.change, err, c.want)
		}
	}
}

// fakeProber answers IndexExists from a set.
type fakeProber struct {
	dialect.Dialect
	indexes map[string]bool
}

func (f fakeProber) IndexExists(_ context.Context, _ dialect.Querier, _, index string) (bool, error) {
	return f.indexes[index], nil
}

// A dropped index's down creates it again; where DDL is not transactional
// the prober decides what is already done in each direction.
func TestChange_DropIndex(t *testing.T) {
	t.Parallel()
	ix := &dialect.Index{Name: "t_a", Columns: []string{"a"}}
	drop := Change{DropIndex: ix, IndexTable: "t"}
	create := Change{Index: ix, IndexTable: "t"}
	d := sqlite.Dialect()
	up, down := drop.statements(d)
	if strings.Join(up, ";") != "DROP INDEX IF EXISTS t_a" || strings.Join(down, ";") != "CREATE INDEX IF NOT EXISTS t_a ON t (a)" {
		t.Fatalf("drop index: up %q, down %q", up, down)
	}
	ctx := context.Background()
	for _, c := range []struct {
		change       Change
		exists, down bool
		done         bool
	}{
		{drop, true, false, false}, {drop, false, false, true},
		{drop, true, true, true}, {drop, false, true, false},
		{create, true, false, true}, {create, false, false, false},
		{create, true, true, false}, {create, false, true, true},
	} {
		p := fakeProber{Dialect: d, indexes: map[string]bool{"t_a": c.exists}}
		done, err := c.change.done(ctx, nil, p, c.down)
		if err != nil || done != c.done {
			t.Errorf("drop=%v exists=%v down=%v: done = %v, %v; want %v", c.change.DropIndex != nil, c.exists, c.down, done, err, c.done)
		}
	}
}
