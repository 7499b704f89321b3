// Package sqlkit is the kit a dialect's author builds with: the shapes of
// SQL that several databases share (CREATE TABLE and CREATE INDEX with IF
// NOT EXISTS, ALTER TABLE, multi-row INSERT, partial-index conditions),
// placeholder rewriting (RebindNumbered, RebindQuestion, Placeholders), a
// transaction begun with a statement of the dialect's own (BeginConn,
// ConnTx), the errors every driver shares (IsConnectionLost, IsNoRows),
// the catalog probe behind dialect.TableProber and its kin (Exists), the
// TCP settings that bound a call on a half-open connection (TCPBounds), and
// the recognition of another database's DSN (DSNKind).
//
// None of it is the contract: package dialect is, and a dialect may use
// as much or as little of this kit as suits it. The core uses the parts
// that are not a dialect's to choose (Placeholders, IsNoRows).
package sqlkit
