// Package migrationtest applies Plenum's generated migration files with the
// migration tools users run, goose and golang-migrate, on SQLite,
// PostgreSQL and MySQL/MariaDB: up, down, up again, then a store opened
// without migrating works on the result. It is a module of its own, so
// that neither tool reaches the go.sum of Plenum's users.
//
// The server databases come from PLENUM_POSTGRES_DSN and PLENUM_MYSQL_DSN
// (skipped when unset, failed when PLENUM_REQUIRE names them). Every run
// works under random table prefixes and drops its tables.
package migrationtest
