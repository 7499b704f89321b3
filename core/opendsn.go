package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/plenumdb/plenum/dialect"
)

// OpenDSN opens a store on the database dsn names, with the dialect called
// name (or one of its aliases: "mariadb" is mysql), or, when name is "",
// the one linked dialect whose DSNs have dsn's form (a postgres:// or
// oracle:// URL, go-sql-driver's user:password@tcp(host:3306)/db, a
// file.db path or file: URI for SQLite; CockroachDB's postgresql:// DSNs
// are PostgreSQL's in form, so name "cockroach"). A dialect is linked by
// importing its package, for its registration alone if need be:
//
//	import _ "github.com/plenumdb/plenum/postgres"
//
//	store, err := core.OpenDSN(ctx, "", os.Getenv("DATABASE_URL"), core.Options{Migrate: true})
//	...
//	defer store.Close()
//
// The database is opened as the dialect's own Open opens it: with the
// settings the dialect depends on, pinged, and with a pool of at most
// dialect.DefaultMaxOpenConns connections (change it on store.DB()). Then
// it is Open with opts. The store owns the handle: Close closes it. On an
// error, nothing stays open.
func OpenDSN(ctx context.Context, name, dsn string, opts Options) (*Store, error) {
	var (
		r   dialect.Registration
		err error
	)
	if name == "" {
		r, err = dialect.ForDSN(dsn)
	} else {
		r, err = dialect.Registered(name)
	}
	if err != nil {
		return nil, fmt.Errorf("plenum: open: %w", err)
	}
	db, err := r.Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("plenum: %w", err)
	}
	s, err := Open(ctx, db, r.Dialect, opts)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s.ownsDB = true
	return s, nil
}

// Close closes the database handle of a store OpenDSN opened. A store
// opened with Open on your own *sql.DB leaves the handle to you: Close
// does nothing then. Close the store after everything that uses it (a
// worker's Stop first).
func (s *Store) Close() error {
	if !s.ownsDB {
		return nil
	}
	return s.db.Close()
}
