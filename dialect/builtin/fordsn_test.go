package builtin_test

import (
	"errors"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin"
)

// With every dialect linked, each one's usual DSNs name it, and the forms
// that fit two (CockroachDB's are PostgreSQL's) go to the one whose they
// most often are.
func TestForDSN_TheShippedDialectsTellTheirDSNsApart(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://root@127.0.0.1:5432/test?sslmode=disable":         "postgres",
		"postgresql://root@localhost:26257/defaultdb?sslmode=disable": "postgres",
		"host=localhost dbname=jobs user=app":                         "postgres",
		"root:secret@tcp(127.0.0.1:3306)/test":                        "mysql",
		"app@unix(/run/mysqld/mysqld.sock)/jobs":                      "mysql",
		"oracle://user:password@localhost:1521/FREEPDB1":              "oracle",
		"./jobs.db":                      "sqlite",
		"/var/lib/app/queue.sqlite3":     "sqlite",
		"file:jobs.db?_txlock=immediate": "sqlite",
		"file:///tmp/jobs.db":            "sqlite",
	} {
		r, err := dialect.ForDSN(dsn)
		if err != nil || r.Dialect.Name() != want {
			t.Errorf("ForDSN(%q) = %v, %v; want %s", dsn, r.Dialect, err, want)
		}
	}
	for _, dsn := range []string{"", "jobs", "mysql://root@localhost/test", "cockroachdb://root@localhost:26257/db"} {
		if r, err := dialect.ForDSN(dsn); !errors.Is(err, dialect.ErrUnknownDialect) {
			t.Errorf("ForDSN(%q) = %v, %v; want ErrUnknownDialect", dsn, r.Dialect, err)
		}
	}
	if r, err := dialect.Registered("mariadb"); err != nil || r.Dialect.Name() != "mysql" {
		t.Errorf(`Registered("mariadb") = %v, %v; want the mysql dialect`, r.Dialect, err)
	}
}
