// Package dsnparams adds run-time parameters to the DSNs of Plenum's tests.
package dsnparams

import (
	"net/url"
	"strings"
	"testing"
)

// Postgres returns the PostgreSQL DSN dsn with run-time parameters added
// (search_path, default_transaction_isolation, ...), in the DSN's own form:
// a URL, or keyword/value pairs.
func Postgres(t testing.TB, dsn string, params map[string]string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("dsnparams: parse DSN: %v", err)
		}
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		dsn += " " + k + "='" + strings.ReplaceAll(v, "'", `\'`) + "'"
	}
	return dsn
}
