package oracle_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/oracle"
)

// A *sql.DB of another driver is refused before anything runs on it: its
// errors could not be classified, nor the claim's OUT bind passed.
func TestCheck_RefusesAnotherDriver(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = oracle.Dialect().Check(context.Background(), db)
	if err == nil || !strings.Contains(err.Error(), "go-ora") {
		t.Fatalf("Check = %v, want a refusal naming go-ora", err)
	}
	if err := oracle.Dialect().Check(context.Background(), nil); err == nil {
		t.Fatal("Check(nil) passed")
	}
}

// core.Open on a handle Check refuses is a misconfiguration, named as the
// dialect's, and nothing is created: the refusal is no database error to
// try again.
func TestOpen_AnotherDriverIsMisconfigured(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = core.Open(context.Background(), db, oracle.Dialect(), core.Options{Migrate: true})
	var se *core.SettingError
	if !errors.Is(err, core.ErrMisconfigured) || !errors.As(err, &se) || se.Dialect != oracle.Name || !strings.Contains(err.Error(), "go-ora") {
		t.Fatalf("core.Open = %v, want a SettingError of oracle naming go-ora", err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d objects created (%v), want none", n, err)
	}
}

func TestNilHandles_AreErrors(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	ctx := context.Background()
	if _, err := d.Begin(ctx, nil, dialect.TxOptions{}); err == nil {
		t.Fatal("Begin(nil) passed")
	}
	if _, err := d.Lock(ctx, nil, "x"); err == nil {
		t.Fatal("Lock(nil) passed")
	}
}

// Open refuses what is not a go-ora URL, and never repeats the password.
func TestOpen_BadDSNsWithoutThePassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"", "  ", "user/secret@host:1521/svc", "postgres://u:secret@h/db", "oracle://u:secret@nohost"} {
		db, err := oracle.Open(dsn)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%q) passed", dsn)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Fatalf("Open(%q) = %v: the error shows the password", dsn, err)
		}
	}
}
