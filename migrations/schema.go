// Package migrations holds Plenum's one schema definition, renders it to each
// dialect's DDL, writes the per-dialect SQL files (go generate, Render,
// WriteFiles), and migrates a database under a lock: Apply and Up apply
// pending versions, Down rolls versions back, Status and Version report
// where a database stands.
//
// A version (Migration) is a list of changes, each with its down: a table
// or an index to create, an index to drop, a nullable column to add, a
// data step. A version that has landed is never edited: a schema change is
// the next version.
package migrations

import (
	"github.com/plenumdb/plenum/dialect"
)

//go:generate go run ./gen -out .

// DefaultPrefix is the table prefix used when none is given.
const DefaultPrefix = "plenum_"

// Names are the final names of Plenum's tables under one prefix.
type Names struct {
	Items     string
	Processes string
	Barriers  string
	// Attempts holds one row per finished attempt of an item (version 2).
	Attempts string
	// Queues holds the state of a queue: paused or not (version 2).
	Queues string
	// Schedules holds the watermark of each periodic schedule: the last
	// tick enqueued (version 2).
	Schedules string
	// Runs holds one row per run of a pipeline (version 3).
	Runs string
	// Signals holds the signals sent to runs (version 3).
	Signals string
	// Lanes holds one row per flow key of a queue (version 8).
	Lanes string
	// RunContext holds the keys and values of runs' contexts (version 10).
	RunContext string
	// ItemMeta holds items' tags and metadata (version 12).
	ItemMeta string
	// Progress holds the progress items' handlers report (version 13).
	Progress   string
	Migrations string
}

// NamesFor returns the table names under prefix. The prefix must already
// have been validated as a safe identifier (see ValidatePrefix).
func NamesFor(prefix string) Names {
	return Names{
		Items:      prefix + "items",
		Processes:  prefix + "processes",
		Barriers:   prefix + "barriers",
		Attempts:   prefix + "attempts",
		Queues:     prefix + "queues",
		Schedules:  prefix + "schedules",
		Runs:       prefix + "runs",
		Signals:    prefix + "signals",
		Lanes:      prefix + "lanes",
		RunContext: prefix + "run_context",
		ItemMeta:   prefix + "item_meta",
		Progress:   prefix + "progress",
		Migrations: prefix + "migrations",
	}
}

// Change is one step of a migration. Exactly one of Table, Index,
// DropIndex, Column and Data is set; each has its down: a created table or
// index is dropped, a dropped index created again, an added column
// dropped, and a data step's Down run.
type Change struct {
	// Table is set to create a table.
	Table *dialect.Table
	// Index is set to create an index on IndexTable.
	Index *dialect.Index
	// DropIndex is set to drop an index of IndexTable, as an earlier
	// version created it (its down creates it again).
	DropIndex  *dialect.Index
	IndexTable string
	// Column is set to add a column to ColumnTable. It must be nullable:
	// the table may hold rows.
	Column      *dialect.Column
	ColumnTable string
	// Data is set for a step that writes rows.
	Data *DataStep
}

// DataStep is a migration step that rewrites rows, in SQL rendered for
// each dialect (standard SQL plus the dialect's pieces: Now, Rebind, ...).
//
// Every statement must be safe to run again: where DDL commits on its own,
// a migration that failed half way is completed by running it again, data
// steps included. Write an insert so that it skips the rows it already
// wrote (NOT EXISTS), an update so that it matches only rows not yet
// rewritten.
type DataStep struct {
	// Table is the table the step writes. Where DDL is not transactional
	// and the dialect can tell (dialect.TableProber), the step is skipped
	// when the table does not exist: the down of a half-applied version.
	Table string
	// DownReads, when set, names a column of Table that Down's statements
	// read and that the version's down drops after them. Where DDL is not
	// transactional and the dialect can tell (dialect.ColumnProber), Down
	// is skipped when the column is gone: a down that stopped half-way
	// ran it before dropping the column, and running it again would fail.
	DownReads string
	// Up and Down return the step's statements and their inverse.
	Up, Down func(d dialect.Schema) []string
}

// Migration is one schema version.
type Migration struct {
	Version int
	Name    string
	Changes []Change
}

// LatestVersion is the schema version this build of Plenum needs.
const LatestVersion = 14

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
	return withNullable([]Migration{init1(n, idx, sequential, claim, state, items, processes, barriers), runtime2(n, idx, sequential), pipelines3(n, idx), dashboard4(n, idx),
		lean5(n, func(table, name string, unique bool, cols []string) Change { return idx(table, name, unique, cols) }), keyed6(n, idx), halts7(n), flow8(n, idx, claim), schedules9(n), runContext10(n), idleLanes11(n, idx, sequential), itemMeta12(n, idx), progress13(n), runVersion14(n)})
}

// init1 is version 1: items, owners and barriers, with the indexes of the
// claim, the reaper and fan-in.
func init1(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change,
	sequential, claim func(Change) Change, state func(string) dialect.Cond, items, processes, barriers *dialect.Table) Migration {
	return Migration{
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
	}
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
	// MaxScheduleLen bounds a periodic schedule's name, short enough that
	// the key of each tick's item (a prefix, the name and the tick's time)
	// stays within MaxKeyLen.
	MaxScheduleLen = 128
	// MaxStoredKeyLen bounds the stored idempotency key. A child's key is
	// stored as its barrier's id, a slash and the key the caller gave, so a
	// caller's key may be up to MaxKeyLen.
	MaxStoredKeyLen = 255
	MaxKeyLen       = 200
)

// ClaimIndex returns the index that serves the claim under prefix (the
// latest one marked Claim on the items table), or nil: what the core
// passes as dialect.ClaimSpec.Seek.
func ClaimIndex(prefix string) *dialect.Index {
	return claimIndexAt(prefix, LatestVersion)
}

// claimIndexAt is ClaimIndex of a schema at version v: the migrator's
// skip-locked probe runs at whatever version Up went to.
func claimIndexAt(prefix string, v int) *dialect.Index {
	var ix *dialect.Index
	items := NamesFor(prefix).Items
	for _, m := range All(prefix) {
		if m.Version > v {
			break
		}
		for _, c := range m.Changes {
			if c.Index != nil && c.Index.Claim && c.IndexTable == items {
				ix = c.Index
			}
		}
	}
	return ix
}
