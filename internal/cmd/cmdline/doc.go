// Package cmdline is what Plenum's commands share: usage errors and exit
// statuses, flag sets that refuse positional arguments, opening a database
// by its dialect's name with errors that name the flag at fault, and
// printing numbers and text read from a database. The plenum command
// (cmd/plenum) and the benchmark's program (bench/plenum) both build on
// it, so that "plenum bench" and the benchmark's own program behave alike.
package cmdline
