// Package sqlcheck checks the statements of the dialects whose servers
// do not run in Plenum's CI, CockroachDB and MySQL 8, against those
// servers' own grammars. It is a module of its own (its go.mod), used only
// by its tests, so that a user of Plenum never downloads the parsers.
//
// The grammars:
//
//   - CockroachDB: github.com/cockroachdb/cockroachdb-parser v0.25.2, the
//     server's parser as a library. Beyond parsing, the checks read the
//     trees: every claim (an UPDATE whose rows come from an ordered, limited
//     SELECT of the same table) locks its candidates FOR UPDATE SKIP LOCKED
//     (CheckCockroach), and the generated DDL hash-shards exactly the
//     primary keys of one UUID column and the indexes the schema marks
//     Sequential, keeps partial indexes partial with predicates on the
//     schema's columns, and creates every table and index of the schema
//     (CheckCockroachSchema).
//   - MySQL 8: vitess.io/vitess v0.24.4's sqlparser at server version
//     MySQLVersion, with ParseStrictDDL (plain Parse keeps a DDL statement
//     it cannot read as a partial one and drops the rest). It refuses what
//     MariaDB accepts and MySQL 8 does not: RETURNING, partial indexes,
//     CREATE INDEX IF NOT EXISTS. CheckMySQL8 adds the rules a grammar does
//     not see: system variables, information_schema tables and functions
//     MySQL 8.0 removed (tx_isolation, tx_read_only, the query cache, ...),
//     and error 1093, a subquery that reads the table an UPDATE or DELETE
//     changes other than through a derived table MySQL materializes.
//
// Each check is shown to bite by the planted statements of the tests:
// MERGE, a misspelt SKIP LOKED, a claim without SKIP LOCKED or without a
// lock, a Sequential index or a UUID key without USING HASH, a partial
// index without its predicate on CockroachDB; a partial index, UPDATE,
// INSERT and DELETE ... RETURNING, tx_isolation, a 1093 subquery on MySQL 8.
//
// The statements checked: every statement of every generated migration
// file (migrations/<dialect>/*.sql), for every dialect directory present;
// a directory of a dialect with no grammar here (other than sqlite and
// postgres, whose servers run in CI) fails the test.
package sqlcheck
