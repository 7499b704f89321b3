package main

import "github.com/plenumdb/plenum/internal/cmd/cmdline"

// printable returns text read from the database as it may reach a
// terminal: itself when it prints as itself, else quoted with what does not
// print escaped (cmdline.Printable says why). Every command prints untrusted
// text through it.
func printable(s string) string { return cmdline.Printable(s) }
