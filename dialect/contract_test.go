package dialect_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// contract is the method set of each part of Dialect, as this major
// version promises it. A change here breaks every dialect outside this
// module: it waits for a major version, and a new need arrives as an
// optional interface instead (as Notifier and Purger did).
var contract = map[reflect.Type][]string{
	reflect.TypeFor[dialect.Describer](): {
		"Capabilities func() dialect.Capabilities",
		"Name func() string",
	},
	reflect.TypeFor[dialect.Syntax](): {
		"AddMicros func(string) string",
		"InsertIgnore func(string, []string, string, int, []string) string",
		"Limit func(int) string",
		"Now func(time.Duration) string",
		"Param func(dialect.ColumnType) string",
		"Rebind func(string) string",
	},
	reflect.TypeFor[dialect.Binder](): {
		"Bool func(bool) interface {}",
		"JSON func([]uint8) interface {}",
		"ScanTime func(interface {}) (time.Time, error)",
		"UUID func(uuid.UUID) interface {}",
	},
	reflect.TypeFor[dialect.Transactor](): {
		"Begin func(context.Context, *sql.DB, dialect.TxOptions) (dialect.Tx, error)",
		"Check func(context.Context, *sql.DB) error",
		"Claim func(context.Context, dialect.Querier, dialect.ClaimSpec) (*sql.Rows, error)",
	},
	reflect.TypeFor[dialect.Classifier](): {
		"Classify func(error) dialect.ErrorClass",
	},
	reflect.TypeFor[dialect.DDL](): {
		"AddColumn func(string, dialect.Column) []string",
		"CreateIndex func(string, dialect.Index) []string",
		"CreateTable func(dialect.Table) []string",
		"DropColumn func(string, dialect.Column) []string",
		"DropIndex func(string, dialect.Index) []string",
		"DropTable func(string) []string",
	},
	reflect.TypeFor[dialect.Locker](): {
		"Lock func(context.Context, *sql.Conn, string) (func(context.Context) error, error)",
	},
}

func methods(t reflect.Type) []string {
	out := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		m := t.Method(i)
		out = append(out, m.Name+" "+m.Type.String())
	}
	slices.Sort(out)
	return out
}

// Each part of Dialect keeps its method set, and Dialect is exactly their
// union, with no part sharing a method with another: a method added,
// removed or changed fails here before it breaks a dialect elsewhere.
func TestDialect_MethodSetIsStable(t *testing.T) {
	t.Parallel()
	var union []string
	for part, want := range contract {
		if got := methods(part); !slices.Equal(got, want) {
			t.Errorf("dialect.%s's methods are\n%q\nthe contract says\n%q", part.Name(), got, want)
		}
		union = append(union, want...)
	}
	slices.Sort(union)
	if got := methods(reflect.TypeFor[dialect.Dialect]()); !slices.Equal(got, union) {
		t.Errorf("dialect.Dialect's methods are\n%q\nthe union of its parts is\n%q", got, union)
	}
	schema := append(append(slices.Clone(contract[reflect.TypeFor[dialect.Describer]()]),
		contract[reflect.TypeFor[dialect.Syntax]()]...), contract[reflect.TypeFor[dialect.DDL]()]...)
	slices.Sort(schema)
	if got := methods(reflect.TypeFor[dialect.Schema]()); !slices.Equal(got, schema) {
		t.Errorf("dialect.Schema's methods are\n%q\nDescriber, Syntax and DDL have\n%q", got, schema)
	}
}
