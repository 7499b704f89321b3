package core

import (
	"context"

	"github.com/plenumdb/plenum/internal/skipprobe"
)

// ProveSkipLocked proves that the store's claim passes over the items
// another session holds and takes others without waiting, as FOR UPDATE
// SKIP LOCKED promises and some databases that accept the words do not
// do (TiDB reads without locking, YugabyteDB waits under SERIALIZABLE).
// It returns a *dialect.SkipLockedError saying what was seen where the
// claim does not, and nil at once on a database of one writer
// (dialect.Capabilities.SingleWriter).
//
// It claims in two sessions of its own at once, on two rows of its own
// that no worker can claim (in the queue "plenum.probe", available a
// century from now), rolls both back and deletes the rows (a process
// killed mid-probe leaves them, and the next probe on the same tables
// deletes them once they are ten minutes old): so it needs two free
// connections and write access to the items table, and takes at most ten
// seconds more than the database's answers to tell a claim that waits.
// The migrator runs it (Options.Migrate, migrations.Apply), and so does
// a worker's Start; Open does not, so that a read-only role can open a
// store. Once it has succeeded on a store, it returns nil at once.
func (s *Store) ProveSkipLocked(ctx context.Context) error {
	if s.skipsLocked.Load() {
		return nil
	}
	if err := skipprobe.Run(ctx, s.db, s.d, s.names.Items, s.seek); err != nil {
		return wrapDBError("prove skip locked", err)
	}
	s.skipsLocked.Store(true)
	return nil
}
