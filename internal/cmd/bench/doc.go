// Package bench is Plenum's benchmark: its hot path and runtime measured
// against a baseline of the SQL a strong engineer would write by hand for
// the same database, in the same run, on the same tables and *sql.DB; the
// fan-out, the claim as tables grow and retention at scale, behind flags;
// the same bare loop on a table with only what it needs (the minimal row,
// minimal.go); the server's commit ceiling (ceiling.go); the steady state,
// behind --steady (steady.go); and the pickup latency. Run is its one entry point, behind both
// "plenum bench" (cmd/plenum) and the program bench/plenum, which take the
// same flags and print the same output. bench/BENCH.md describes each
// measurement, the command behind each figure and where the time goes.
//
// The baseline is hand-written SQL per database, so, unlike the library,
// this package picks statements, settings and fill or plan queries by the
// dialect's name; Plenum's side goes only through core and the worker
// runtime.
package bench
