package migrations

import "github.com/plenumdb/plenum/dialect"

// runVersion14 is version 14: a run records the version of what it runs
// (core.RunSpec.Version: a pipeline definition's version), so that a
// program that changes a pipeline while runs of it are under way can run
// each of them on the definition it started with, and a reader can tell
// which one that is. runs.version is NULL for a run that names none, as
// every run written before this version does (a pipeline reads NULL as
// its version 1). Down drops the column, and the versions with it.
func runVersion14(n Names) Migration {
	return Migration{
		Version: 14,
		Name:    "run_version",
		Changes: []Change{
			{Column: &dialect.Column{Name: "version", Type: dialect.Int, Nullable: true}, ColumnTable: n.Runs},
		},
	}
}
