package sqlkit_test

import (
	"testing"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

func TestDSNKind(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://u:p@h:5432/db":         "postgres",
		"PostgreSQL://h/db":                "postgres",
		"u:p@tcp(h:3306)/db":               "mysql",
		"u@unix(/run/mysqld.sock)/db":      "mysql",
		"mysql://u@h/db":                   "mysql",
		"oracle://u:p@h:1521/svc":          "oracle",
		"file:/tmp/x.db":                   "sqlite",
		"/var/lib/app/jobs.db":             "",
		"jobs.db":                          "",
		"host=h user=u dbname=db":          "",
		"https://example.com/not-a-dsn":    "",
		"  postgres://with-spaces/around ": "postgres",
	} {
		if got := sqlkit.DSNKind(dsn); got != want {
			t.Errorf("DSNKind(%q) = %q, want %q", dsn, got, want)
		}
	}
}
