package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/postgres"
)

// LimitedRole creates a PostgreSQL login role of a random name whose
// sessions the server refuses beyond limit (CONNECTION LIMIT; the server
// does not apply it to superusers, which the role is not), and returns
// dsn with the role's name and password in it. The role may read and
// write the tables and sequences, in dsn's current schema, whose names
// start with prefix (empty: none), which must exist by now. It is dropped,
// with its privileges, when the test ends.
//
// It bounds what a test may take from a server that other tests share:
// a pool that went past its bound would be refused (SQLSTATE 53300) long
// before the server's max_connections.
func LimitedRole(t testing.TB, dsn string, limit int, prefix string) string {
	t.Helper()
	return limitedRole(t, dsn, limit, func(ctx context.Context, admin *sql.DB) ([]string, error) {
		if prefix == "" {
			return nil, nil
		}
		return tablesOf(ctx, admin, prefix)
	})
}

// LimitedCreatorRole is LimitedRole for a test that creates its own
// tables: the role may create tables in dsn's current schema, and owns
// what it creates, which is dropped with it.
func LimitedCreatorRole(t testing.TB, dsn string, limit int) string {
	t.Helper()
	return limitedRole(t, dsn, limit, func(ctx context.Context, admin *sql.DB) ([]string, error) {
		var schema string
		if err := admin.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return nil, err
		}
		return []string{"GRANT USAGE, CREATE ON SCHEMA " + schema}, nil
	})
}

// limitedRole makes the role of LimitedRole, granted what grants returns
// (GRANT statements without their TO).
func limitedRole(t testing.TB, dsn string, limit int, grants func(context.Context, *sql.DB) ([]string, error)) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Skipf("testdb: a limited role needs a postgres:// URL DSN, not %q", dsn)
	}
	admin, err := postgres.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	role := fmt.Sprintf("plenum_limited_%08x", rand.Uint32())
	password := fmt.Sprintf("%016x", rand.Uint64())
	if _, err := admin.ExecContext(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' CONNECTION LIMIT %d", role, password, limit)); err != nil {
		t.Fatalf("create a role of limit %d: %v", limit, err)
	}
	// Registered after admin's Close, so that it runs before it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range []string{
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'",
			"DROP OWNED BY " + role,
			"DROP ROLE " + role,
		} {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				t.Errorf("drop role %s: %s: %v", role, stmt, err)
			}
		}
	})
	gs, err := grants(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if _, err := admin.ExecContext(ctx, g+" TO "+role); err != nil {
			t.Fatalf("%s TO %s: %v", g, role, err)
		}
	}
	u.User = url.UserPassword(role, password)
	return u.String()
}

// tablesOf returns the GRANTs of the tables and sequences of the current
// schema whose names start with prefix.
func tablesOf(ctx context.Context, db *sql.DB, prefix string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, c.relkind FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'S') AND starts_with(c.relname, $1)`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list the tables %s*: %w", prefix, err)
	}
	defer rows.Close()
	var grants []string
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			return nil, err
		}
		q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		if kind == "S" {
			grants = append(grants, "GRANT USAGE, SELECT, UPDATE ON SEQUENCE "+q)
		} else {
			grants = append(grants, "GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "+q)
		}
	}
	return grants, rows.Err()
}
