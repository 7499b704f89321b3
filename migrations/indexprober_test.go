package migrations_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// noIndexIfNotExists is SQLite dressed as MySQL 8: DDL that commits on its
// own, and CREATE INDEX without IF NOT EXISTS, so that running an index's
// statement twice fails. With probe set it is an IndexProber, and counts
// the questions it was asked.
type noIndexIfNotExists struct {
	dialect.Dialect
	probes *atomic.Int64
}

func (d noIndexIfNotExists) Capabilities() dialect.Capabilities {
	c := d.Dialect.Capabilities()
	c.TransactionalDDL = false
	return c
}

func (d noIndexIfNotExists) CreateIndex(table string, ix dialect.Index) []string {
	out := d.Dialect.CreateIndex(table, ix)
	for i, s := range out {
		out[i] = strings.Replace(s, " IF NOT EXISTS", "", 1)
	}
	return out
}

// prober is noIndexIfNotExists with IndexExists.
type prober struct{ noIndexIfNotExists }

func (d prober) IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error) {
	d.probes.Add(1)
	var n int
	err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?", table, index).Scan(&n)
	return n > 0, err
}

// A migration that stopped half way (the items table and two of its
// indexes exist, nothing recorded) is completed by Apply when the dialect
// can say which indexes exist, and cannot be completed without that.
func TestApply_IndexProberCompletesHalfAppliedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	plain := noIndexIfNotExists{Dialect: sqlite.Dialect(), probes: new(atomic.Int64)}

	// Half way: the first statements of version 1, run by hand.
	up, _ := migrations.Statements(plain, migrations.All(prefix)[0])
	if len(up) < 4 || !strings.HasPrefix(up[1], "CREATE INDEX plenum_items_claim ") {
		t.Fatalf("unexpected statements: %q", up)
	}
	for _, s := range up[:3] { // items, its claim index, its key index
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	// Without a prober the index statements fail on the second run.
	if _, err := migrations.Apply(ctx, db, plain, prefix); err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "partly applied: run Apply") {
		t.Fatalf("Apply without an IndexProber over existing indexes = %v, want an 'already exists' error", err)
	}
	if v := version(t, db, plain); v != 0 {
		t.Fatalf("version after a failed Apply = %d, want 0", v)
	}

	p := prober{plain}
	applied, err := migrations.Apply(ctx, db, p, prefix)
	if err != nil || !slices.Equal(applied, allVersions) {
		t.Fatalf("Apply with an IndexProber = %v, %v; want %v", applied, err, allVersions)
	}
	checkSchema(t, db)
	if v := version(t, db, p); v != migrations.LatestVersion {
		t.Fatalf("version = %d, want %d", v, migrations.LatestVersion)
	}
	var indexes int64
	for _, m := range migrations.All(prefix) {
		for _, c := range m.Changes {
			if c.Index != nil || c.DropIndex != nil {
				indexes++
			}
		}
	}
	if got := plain.probes.Load(); got != indexes {
		t.Errorf("IndexExists asked %d times, want once per index created or dropped (%d)", got, indexes)
	}

	// Nothing pending: no statement runs, no question is asked.
	plain.probes.Store(0)
	if applied, err := migrations.Apply(ctx, db, p, prefix); err != nil || len(applied) != 0 {
		t.Fatalf("Apply on a current schema = %v, %v", applied, err)
	}
	if got := plain.probes.Load(); got != 0 {
		t.Errorf("IndexExists asked %d times on a current schema, want 0", got)
	}
}

// Where DDL is transactional the prober is not needed, and not asked: a
// failure leaves nothing behind to skip.
func TestApply_IndexProberNotAskedInTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	p := transactionalProber{Dialect: sqlite.Dialect(), probes: new(atomic.Int64)}
	if _, err := migrations.Apply(ctx, db, p, prefix); err != nil {
		t.Fatal(err)
	}
	checkSchema(t, db)
	if got := p.probes.Load(); got != 0 {
		t.Errorf("IndexExists asked %d times with transactional DDL, want 0", got)
	}
}

type transactionalProber struct {
	dialect.Dialect
	probes *atomic.Int64
}

func (d transactionalProber) IndexExists(context.Context, dialect.Querier, string, string) (bool, error) {
	d.probes.Add(1)
	return false, nil
}
