// Package builtin links every dialect this module ships, so that tools that
// choose a database by name (the plenum CLI, the migration generator) know
// them all through the registry in package dialect. Import it for its side
// effect:
//
//	import _ "github.com/plenumdb/plenum/dialect/builtin"
//
// A new dialect package adds its import here, and nowhere else.
package builtin

import (
	_ "github.com/plenumdb/plenum/cockroach" // CockroachDB
	_ "github.com/plenumdb/plenum/mysql"     // MySQL 8 and MariaDB
	_ "github.com/plenumdb/plenum/oracle"    // Oracle Database 19c and 23ai (go-ora)
	_ "github.com/plenumdb/plenum/postgres"  // PostgreSQL
	_ "github.com/plenumdb/plenum/sqlite"    // SQLite (modernc.org/sqlite)
)
