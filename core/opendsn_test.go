package core_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// A store opened from a DSN alone finds its dialect from the DSN's form,
// owns the handle it opened and closes it; one opened on the caller's
// handle leaves it open.
func TestOpenDSN_FindsTheDialectAndOwnsTheHandle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := core.OpenDSN(ctx, "", filepath.Join(dir, "jobs.db"), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect().Name() != "sqlite" {
		t.Fatalf("dialect %s, want sqlite", s.Dialect().Name())
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().PingContext(ctx); err == nil {
		t.Fatal("the handle still answers after Close")
	}

	// Named, the dialect opens a path of any name.
	named, err := core.OpenDSN(ctx, "sqlite", filepath.Join(dir, "queue"), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()

	db, err := sqlite.Open(filepath.Join(dir, "own.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mine, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := mine.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("Close of a store on the caller's handle closed it: %v", err)
	}
}

// A dialect name no linked package registered, or a DSN whose form no
// linked dialect has, is refused before anything opens, without repeating
// the DSN (it may hold a password).
func TestOpenDSN_UnknownDialectRefused(t *testing.T) {
	t.Parallel()
	if _, err := core.OpenDSN(t.Context(), "nosuchdb", "x", core.Options{}); !errors.Is(err, dialect.ErrUnknownDialect) {
		t.Fatalf("OpenDSN of an unknown dialect = %v, want ErrUnknownDialect", err)
	}
	_, err := core.OpenDSN(t.Context(), "", "nosuch://user:secret@host/db", core.Options{})
	if !errors.Is(err, dialect.ErrUnknownDialect) || errors.Is(err, core.ErrClosed) {
		t.Fatalf("OpenDSN of an unknown form = %v, want ErrUnknownDialect", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the error repeats the DSN: %v", err)
	}
}
