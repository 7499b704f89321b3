package dialect

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registration is everything a tool that picks a database by name (the
// plenum CLI, the migration generator, a benchmark) needs to know about one
// dialect. A dialect package registers exactly one, from init:
//
//	func init() {
//		dialect.Register(dialect.Registration{
//			Dialect: Dialect(),
//			Open:    Open,
//			DSN:     dialect.DSNForm{Example: "oracle://user:password@localhost:1521/FREEPDB1"},
//		})
//	}
//
// Nothing else in the module lists dialects: the generator writes the SQL
// files of every registered dialect, and the CLI opens any of them.
type Registration struct {
	// Dialect is the dialect; its Name is the registered name. Required.
	Dialect Dialect

	// Aliases are other names the dialect answers to in Lookup and
	// Registered ("mariadb" for mysql), for people who call their
	// database by another name. Optional.
	Aliases []string

	// Open opens a *sql.DB on a DSN of the dialect's form with every
	// setting the dialect's Check requires, and pings it, so that a DSN
	// that cannot work fails there. Its errors should say whether the DSN
	// is malformed, the server refused the credentials, or it could not be
	// reached: tools show them as the fault of the DSN. Required.
	Open func(dsn string) (*sql.DB, error)

	// DSN says what the dialect's DSNs look like. Example is required.
	DSN DSNForm

	// Version, when set, returns the server's product and version
	// ("PostgreSQL 15.18", "MariaDB 10.11.19-MariaDB"), for reports such as
	// the CLI's conformance table. Optional.
	Version func(ctx context.Context, db *sql.DB) (string, error)

	// Checkpoint, when set, folds work the database keeps for later into
	// its files (SQLite's write-ahead log), so that a benchmark's
	// measurements each start clean. Optional.
	Checkpoint func(ctx context.Context, db *sql.DB) error

	// Settle, when set, does to tables what the database's own background
	// maintenance does to them in time (PostgreSQL's autovacuum: a VACUUM
	// (ANALYZE) of each), so that a benchmark's measurements each start
	// from tables as that maintenance keeps them, not from the dead row
	// versions of the measurements before. Optional.
	Settle func(ctx context.Context, db *sql.DB, tables ...string) error
}

// DSNForm describes a dialect's data source names, for flags and messages.
type DSNForm struct {
	// Example is a typical DSN: "postgres://user:password@localhost:5432/db".
	Example string
	// File is true when a DSN is the path of a database file on this
	// machine (SQLite): tools then accept a file path and may make a new
	// file where a server database would have to be named.
	File bool
	// Schemes are the URL schemes of the dialect's DSNs, in lower case
	// ("postgres", "postgresql"), by which ForDSN tells the dialect from
	// a DSN alone. A scheme two dialects accept (CockroachDB's DSNs are
	// PostgreSQL's) belongs to the one whose DSNs most often have it:
	// the other is named. Optional.
	Schemes []string
	// Recognize, when set, reports whether dsn, which is no URL (it has
	// no "://"), has the dialect's form (go-sql-driver's
	// user@tcp(host:3306)/db; a SQLite file's path). It must not claim
	// another dialect's forms. Optional.
	Recognize func(dsn string) bool
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Registration{}
	// aliases maps each alias to its dialect's name.
	aliases = map[string]string{}
)

// Register makes a dialect available by name to Lookup and Registered.
// Dialect packages call it from init, as database/sql drivers do. A
// registration without a Dialect, a name, an Open or an example DSN, or a
// second registration of a name, panics: it is a programming error in the
// binary, found the first time it runs.
func Register(r Registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if r.Dialect == nil {
		panic("dialect: Register of a nil dialect")
	}
	name := r.Dialect.Name()
	switch {
	case name == "":
		panic("dialect: Register of a dialect with an empty name")
	case r.Open == nil:
		panic("dialect: Register of " + name + " without Open")
	case strings.TrimSpace(r.DSN.Example) == "":
		panic("dialect: Register of " + name + " without DSN.Example")
	}
	if _, dup := registry[name]; dup {
		panic("dialect: Register called twice for " + name)
	}
	for _, a := range r.Aliases {
		if _, dup := registry[a]; dup || a == "" {
			panic("dialect: Register of " + name + " with the alias " + a + ", which is taken")
		}
		if _, dup := aliases[a]; dup {
			panic("dialect: Register of " + name + " with the alias " + a + ", which is taken")
		}
	}
	for n, target := range aliases {
		if n == name {
			panic("dialect: Register of " + name + ", which is an alias of " + target)
		}
	}
	registry[name] = r
	for _, a := range r.Aliases {
		aliases[a] = name
	}
}

// Lookup returns the registered dialect called name, or an error matching
// ErrUnknownDialect that lists the dialects this binary knows.
func Lookup(name string) (Dialect, error) {
	r, err := Registered(name)
	if err != nil {
		return nil, err
	}
	return r.Dialect, nil
}

// Registered returns the registration of the dialect called name (or one
// of its Aliases), or an error matching ErrUnknownDialect that lists the
// dialects this binary knows.
func Registered(name string) (Registration, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if r, ok := registry[name]; ok {
		return r, nil
	}
	if r, ok := registry[aliases[name]]; ok {
		return r, nil
	}
	return Registration{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownDialect, name, strings.Join(namesLocked(), ", "))
}

// Registrations returns every registration, sorted by name.
func Registrations() []Registration {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Registration, 0, len(registry))
	for _, n := range namesLocked() {
		out = append(out, registry[n])
	}
	return out
}

// Names lists the registered dialects, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
