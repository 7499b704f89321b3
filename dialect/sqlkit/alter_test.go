package sqlkit_test

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

func TestAlterDDL(t *testing.T) {
	t.Parallel()
	typ := func(c dialect.Column) string { return c.Type.String() }
	name := dialect.Column{Name: "name", Type: dialect.String, Size: 9, Nullable: true}
	for _, c := range []struct{ got, want string }{
		{sqlkit.AddColumnDDL("t", name, typ, false, false), "ALTER TABLE t ADD COLUMN name string"},
		{sqlkit.AddColumnDDL("t", name, typ, true, true), "ALTER TABLE t ADD COLUMN IF NOT EXISTS name string NULL"},
		{sqlkit.AddColumnDDL("t", dialect.Column{Name: "n", Type: dialect.Int}, typ, true, false), "ALTER TABLE t ADD COLUMN n int NOT NULL"},
		{sqlkit.DropColumnDDL("t", "name", false), "ALTER TABLE t DROP COLUMN name"},
		{sqlkit.DropColumnDDL("t", "name", true), "ALTER TABLE t DROP COLUMN IF EXISTS name"},
		{sqlkit.DropIndexDDL("t_a"), "DROP INDEX IF EXISTS t_a"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
