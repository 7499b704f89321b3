// Package containers runs Plenum's conformance suite against database
// servers it starts in containers, through testcontainers, where a Docker
// engine answers: PostgreSQL, MySQL 8, MariaDB, CockroachDB and Oracle
// Database Free (23ai).
//
// It is a module of its own (github.com/plenumdb/plenum/containers) so that
// testcontainers, the Docker client and OpenTelemetry, which only these
// tests need, never reach the module graph of an application that imports
// Plenum. Run it from this directory:
//
//	cd containers && go test -count=1 ./...
//
// Without a Docker engine every test skips, saying so;
// PLENUM_REQUIRE=docker turns those skips into failures. The root module's
// tests use servers named by environment variables instead
// (PLENUM_POSTGRES_DSN, PLENUM_MYSQL_DSN, ...).
package containers
