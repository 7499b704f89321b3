package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// State is where one schema version stands in a database.
type State int

// The states of a version.
const (
	// Pending: not applied.
	Pending State = iota + 1
	// Applied: every statement ran and the version is recorded.
	Applied
	// PartlyApplied: a run of Up stopped half way (only where DDL is not
	// transactional); running Up again completes it.
	PartlyApplied
	// PartlyRolledBack: a run of Down stopped half way; running Down again
	// completes the rollback, running Up restores the version.
	PartlyRolledBack
)

// String names the state, for messages and the CLI.
func (s State) String() string {
	switch s {
	case Pending:
		return "pending"
	case Applied:
		return "applied"
	case PartlyApplied:
		return "partly applied"
	case PartlyRolledBack:
		return "partly rolled back"
	}
	return "unknown"
}

// VersionStatus is where one schema version stands.
type VersionStatus struct {
	Version int
	Name    string
	State   State
	// AppliedAt is when the version was recorded as applied, or, for a
	// version partly applied or rolled back, when that run began; on the
	// database clock. Zero for a pending version.
	AppliedAt time.Time
	// Unknown is set for a version recorded in the database that this
	// build does not know: a newer Plenum applied it.
	Unknown bool
}

// Status reports every version this build knows, oldest first, and after
// them any version the database records that this build does not know. A
// database without Plenum's migrations table reports every version as
// pending. It reads only, and takes no lock.
func Status(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) ([]VersionStatus, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if db == nil || d == nil {
		return nil, errors.New("migrations: status: nil database or dialect")
	}
	rows, err := versionsIfAny(ctx, db, d, prefix)
	if err != nil {
		return nil, err
	}
	recorded, started := map[int]versionRow{}, map[int]versionRow{}
	for _, r := range rows {
		if r.version < 0 {
			started[-r.version] = r
		} else {
			recorded[r.version] = r
		}
	}
	at := func(r versionRow) (time.Time, error) {
		t, err := d.ScanTime(r.appliedAt)
		if err != nil {
			return time.Time{}, fmt.Errorf("migrations: status: version %d: %w", r.version, err)
		}
		return t, nil
	}
	var out []VersionStatus
	for _, m := range All(prefix) {
		s := VersionStatus{Version: m.Version, Name: m.Name, State: Pending}
		r, ok := recorded[m.Version]
		st, partly := started[m.Version]
		switch {
		case partly && ok:
			s.State, r = PartlyRolledBack, st
		case partly:
			s.State, r, ok = PartlyApplied, st, true
		case ok:
			s.State = Applied
		}
		if ok {
			if s.AppliedAt, err = at(r); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
		delete(recorded, m.Version)
		delete(started, m.Version)
	}
	for _, r := range rows {
		v := r.version
		if v < 0 {
			v = -v
		}
		if v <= LatestVersion {
			continue
		}
		s := VersionStatus{Version: v, Name: r.name, State: Applied, Unknown: true}
		if r.version < 0 {
			s.State = PartlyApplied
		}
		if s.AppliedAt, err = at(r); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Version returns the schema version under prefix that is complete: the
// highest version applied below any version left partly applied or partly
// rolled back (where DDL is not transactional); 0 when the migrations
// table does not exist.
func Version(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (int, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	if db == nil || d == nil {
		return 0, errors.New("migrations: version: nil database or dialect")
	}
	rows, err := versionsIfAny(ctx, db, d, prefix)
	if err != nil {
		return 0, fmt.Errorf("migrations: version: %w", err)
	}
	v, lowestStarted := 0, 0
	for _, r := range rows {
		switch {
		case r.version < 0 && (lowestStarted == 0 || -r.version < lowestStarted):
			lowestStarted = -r.version
		case r.version > v:
			v = r.version
		}
	}
	if lowestStarted > 0 && v >= lowestStarted {
		v = lowestStarted - 1
	}
	return v, nil
}

// versionsIfAny reads the migrations table, or returns no rows when it
// does not exist.
//
// No query tells a missing table apart on every database without parsing
// error messages, so it reads first and, only when that fails, finds out
// why: through dialect.TableProber when the dialect has it; otherwise by
// pinging the database, taking a failure on a reachable database as a
// missing table. Without a prober, a table that exists but cannot be read
// (a missing grant) also reads as missing; Apply then fails loudly when it
// reads the applied versions, so nothing is silently skipped.
func versionsIfAny(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) ([]versionRow, error) {
	table := NamesFor(prefix).Migrations
	rows, err := readVersions(ctx, db, prefix)
	if err == nil {
		return rows, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	if p, ok := d.(dialect.TableProber); ok {
		exists, perr := p.TableExists(ctx, db, table)
		if perr != nil {
			return nil, fmt.Errorf("%w (and checking for %s: %v)", err, table, perr)
		}
		if !exists {
			return nil, nil
		}
		return nil, err
	}
	if d.Classify(err) == dialect.ConnectionLost {
		return nil, err
	}
	if perr := db.PingContext(ctx); perr != nil {
		return nil, err
	}
	return nil, nil
}
