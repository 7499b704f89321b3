// Package storesql is the seam between core and the packages beside it
// that read a store's tables or list its statements: the browse package
// (the dashboard's reads) and the statement catalog (internal/catalog).
//
// Core owns the store: its handle, dialect, table names, statement
// rendering, read retry and row scanning. None of it is exported from
// core, and core imports neither browse nor the catalog. Instead core
// exposes, once, in its init, functions that give those packages what
// they need of a store (Expose); they look them up by type (Exposed).
// The types name core's row types through type parameters (Store), since
// this package sits below core and cannot import it.
//
// What the store and its readers share as code is here: keyset reads
// that retry as the store retries (Rows), time columns scanned through
// the dialect (Time), and a state written as a range of one value
// (OneState).
package storesql
