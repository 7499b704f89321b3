// Package migrations holds Plenum's one schema definition, renders it to each
// dialect's DDL, writes the per-dialect SQL files (go generate), and applies
// pending versions to a database under a lock.
package migrations

import (
	"github.com/plenumdb/plenum/dialect"
)

//go:generate go run ./gen -out .

// DefaultPrefix is the table prefix used when none is given.
const DefaultPrefix = "plenum_"

// Names are the final names of Plenum's tables under one prefix.
type Names struct {
	Items      string
	Processes  string
	Barriers   string
	Migrations string
}

// NamesFor returns the table names under prefix. The prefix must already
// have been validated as a safe identifier (see ValidatePrefix).
func NamesFor(prefix string) Names {
	return Names{
		Items:      prefix + "items",
		Processes:  prefix + "processes",
		Barriers:   prefix + "barriers",
		Migrations: prefix + "migrations",
	}
}

// Change is one step of a migration: a table to create, or an index.
type Change struct {
	// Table is set for a CREATE TABLE.
	Table *dialect.Table
	// Index and IndexTable are set for a CREATE INDEX.
	Index      *dialect.Index
	IndexTable string
}

// Migration is one schema version.
type Migration struct {
	Version int
	Name    string
	Changes []Change
}

// LatestVersion is the schema version this build of Plenum needs.
const LatestVersion = 1

// All returns every migration, oldest first, with table and index names
// under prefix.
func All(prefix string) []Migration {
	n := NamesFor(prefix)
	col := func(name string, t dialect.ColumnType) dialect.Column {
		return dialect.Column{Name: name, Type: t}
	}
	str := func(name string, size int) dialect.Column {
		return dialect.Column{Name: name, Type: dialect.String, Size: size}
	}
	null := func(c dialect.Column) dialect.Column { c.Nullable = true; return c }
	// empty marks a column that may hold "", which Oracle stores as NULL.
	empty := func(c dialect.Column) dialect.Column { c.Empty = true; return c }

	items := &dialect.Table{
		Name: n.Items,
		Columns: []dialect.Column{
			col("id", dialect.UUID),
			str("queue", MaxQueueLen),
			empty(str("kind", MaxKindLen)),
			null(str("unique_key", MaxStoredKeyLen)),
			null(col("payload", dialect.JSON)),
			col("priority", dialect.Int),
			str("state", 16),
			col("available_at", dialect.Time),
			col("attempt", dialect.Int),
			col("max_attempts", dialect.Int),
			col("crash_count", dialect.Int),
			null(col("claim_token", dialect.UUID)),
			null(col("claimed_by", dialect.UUID)),
			null(col("claimed_at", dialect.Time)),
			null(col("lease_expires_at", dialect.Time)),
			null(col("barrier_id", dialect.UUID)),
			null(col("join_barrier_id", dialect.UUID)),
			null(col("result", dialect.JSON)),
			null(col("last_error", dialect.Text)),
			col("created_at", dialect.Time),
			null(col("finished_at", dialect.Time)),
		},
		PrimaryKey: []string{"id"},
	}
	processes := &dialect.Table{
		Name: n.Processes,
		Columns: []dialect.Column{
			col("id", dialect.UUID),
			empty(str("host", 255)),
			col("pid", dialect.BigInt),
			col("started_at", dialect.Time),
			col("last_heartbeat_at", dialect.Time),
			// Counts heartbeats. Every heartbeat changes it, so that a
			// database that reports changed rather than matched rows (MySQL)
			// never reads two heartbeats in one clock tick as a lost owner.
			col("heartbeats", dialect.BigInt),
		},
		PrimaryKey: []string{"id"},
	}
	barriers := &dialect.Table{
		Name: n.Barriers,
		Columns: []dialect.Column{
			col("id", dialect.UUID),
			col("owner_id", dialect.UUID),
			str("name", MaxBarrierNameLen),
			null(col("parent_barrier_id", dialect.UUID)),
			col("expected", dialect.BigInt),
			col("arrived", dialect.BigInt),
			col("failed", dialect.BigInt),
			col("sealed", dialect.Bool),
			null(col("fired_at", dialect.Time)),
			null(col("dispatch_cursor", dialect.Text)),
			str("join_queue", MaxQueueLen),
			empty(str("join_kind", MaxKindLen)),
			null(col("join_payload", dialect.JSON)),
			col("join_priority", dialect.Int),
			col("join_max_attempts", dialect.Int),
			str("on_child_failure", 16),
			null(col("join_item_id", dialect.UUID)),
			col("created_at", dialect.Time),
		},
		PrimaryKey: []string{"id"},
	}
	idx := func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change {
		return Change{IndexTable: table, Index: &dialect.Index{Name: prefix + name, Columns: cols, Unique: unique, Where: where}}
	}
	sequential := func(c Change) Change { c.Index.Sequential = true; return c }
	claim := func(c Change) Change { c.Index.Claim = true; return c }
	state := func(s string) dialect.Cond { return dialect.Cond{Column: "state", Value: s} }
	return withNullable([]Migration{{
		Version: 1,
		Name:    "init",
		Changes: []Change{
			{Table: items},
			// The claim path: the next available items of a queue in claim order.
			claim(idx(n.Items, "items_claim", false, []string{"queue", "priority", "available_at", "id"}, state("available"))),
			// Idempotency keys, unique per queue; NULL (no key) never collides.
			idx(n.Items, "items_key", true, []string{"queue", "unique_key"}),
			// The reaper's scan for expired leases.
			sequential(idx(n.Items, "items_lease", false, []string{"lease_expires_at"}, state("claimed"))),
			// Heartbeats extend an owner's leases; the reaper finds an owner's claims.
			idx(n.Items, "items_owner", false, []string{"claimed_by"}, state("claimed")),
			// A barrier's children, in keyset pages for the join.
			idx(n.Items, "items_barrier", false, []string{"barrier_id", "id"}, dialect.Cond{Column: "barrier_id", NotNull: true}),
			{Table: processes},
			sequential(idx(n.Processes, "processes_heartbeat", false, []string{"last_heartbeat_at"})),
			{Table: barriers},
			// Opening a barrier is get-or-create by (owner, name).
			idx(n.Barriers, "barriers_owner", true, []string{"owner_id", "name"}),
			// Barriers that have not fired, oldest first: the fan-ins that
			// may be stuck (Store.UnfiredBarriers).
			sequential(idx(n.Barriers, "barriers_unfired", false, []string{"created_at", "id"}, dialect.Cond{Column: "fired_at", Null: true})),
		},
	}})
}

// MigrationsTable returns the table that records applied versions.
func MigrationsTable(prefix string) dialect.Table {
	return dialect.Table{
		Name: NamesFor(prefix).Migrations,
		Columns: []dialect.Column{
			{Name: "version", Type: dialect.BigInt},
			{Name: "name", Type: dialect.String, Size: 255},
			{Name: "applied_at", Type: dialect.Time},
		},
		PrimaryKey: []string{"version"},
	}
}

// Size limits of the schema's text columns, in characters. The core
// validates input against them before it reaches the database.
const (
	MaxQueueLen       = 128
	MaxKindLen        = 128
	MaxBarrierNameLen = 128
	// MaxStoredKeyLen bounds the stored idempotency key. A child's key is
	// stored as its barrier's id, a slash and the key the caller gave, so a
	// caller's key may be up to MaxKeyLen.
	MaxStoredKeyLen = 255
	MaxKeyLen       = 200
)
