// Package bundledsqlite runs Plenum's checked-in SQLite migration files
// with golang-migrate and the SQLite golang-migrate itself brings
// (modernc.org/sqlite v1.18.1: SQLite 3.39), as a user who imports only
// golang-migrate gets it. It is a module of its own because Plenum's
// newer SQLite would replace that one in any module that imports both.
package bundledsqlite
