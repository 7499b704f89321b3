package sqlcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/migrations"
)

// migrationsDir is the checked-in generated SQL, one directory per dialect.
const migrationsDir = "../migrations"

// runHere are the dialects whose statements run on a real server of
// their own in CI (SQLite, PostgreSQL 15): their files need no grammar of
// another server.
var runHere = []string{"sqlite", "postgres"}

// fileGrammars checks one statement of a generated file of the dialect
// named by the key.
var fileGrammars = map[string]func(string) error{
	"cockroach": func(s string) error { _, err := CheckCockroach(s); return err },
	"mysql":     func(s string) error { _, err := CheckMySQL8(s); return err },
	"oracle":    CheckOracle,
}

// fileSplitters split the generated files of the dialect named by the key
// into statements where SplitFile does not fit: Oracle's PL/SQL blocks hold
// ';' of their own.
var fileSplitters = map[string]func(string) []string{
	"oracle": SplitOracleFile,
}

// dialectDirs returns the directories of migrationsDir that hold .sql
// files: one per dialect the generator writes.
func dialectDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(migrationsDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if files, _ := filepath.Glob(filepath.Join(migrationsDir, e.Name(), "*.sql")); len(files) > 0 {
			dirs = append(dirs, e.Name())
		}
	}
	if !slices.Contains(dirs, "cockroach") || !slices.Contains(dirs, "mysql") || !slices.Contains(dirs, "oracle") {
		t.Fatalf("migrations directories %v lack cockroach, mysql or oracle", dirs)
	}
	return dirs
}

// fileStatements returns the statements of every .sql file in dir, by file.
func fileStatements(t *testing.T, dir, glob string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(migrationsDir, dir, glob))
	if err != nil {
		t.Fatal(err)
	}
	split := SplitFile
	if s, ok := fileSplitters[dir]; ok {
		split = s
	}
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = split(string(b))
	}
	return out
}

// TestGeneratedMigrations_ParseWithTheServersGrammar checks every statement
// of every generated migration file, up and down, of every dialect
// directory present, with the grammar of the server the dialect is for. A
// new version is checked as soon as go generate writes it; a directory of
// a dialect with no grammar here fails, so that a new dialect is not left
// unchecked.
func TestGeneratedMigrations_ParseWithTheServersGrammar(t *testing.T) {
	t.Parallel()
	for _, dir := range dialectDirs(t) {
		if slices.Contains(runHere, dir) {
			continue
		}
		check, ok := fileGrammars[dir]
		if !ok {
			t.Errorf("migrations/%s: no grammar checks the %s dialect's files: add one to fileGrammars", dir, dir)
			continue
		}
		n := 0
		for file, stmts := range fileStatements(t, dir, "*.sql") {
			if len(stmts) == 0 {
				t.Errorf("migrations/%s/%s: no statements", dir, file)
			}
			for _, s := range stmts {
				n++
				if err := check(s); err != nil {
					t.Errorf("migrations/%s/%s: %v\n%s", dir, file, err, s)
				}
			}
		}
		t.Logf("migrations/%s: %d statements checked", dir, n)
	}
}

// TestGeneratedMigrations_CockroachSchemaFacts checks the facts of the
// cockroach files' trees against the schema: hash-sharded UUID keys and
// Sequential indexes, partial indexes with their predicates.
func TestGeneratedMigrations_CockroachSchemaFacts(t *testing.T) {
	t.Parallel()
	if err := CheckCockroachSchema(cockroachUpStatements(t), migrations.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
}

// cockroachUpStatements returns the statements of every up file of the
// cockroach directory, oldest version first.
func cockroachUpStatements(t *testing.T) []string {
	t.Helper()
	byFile := fileStatements(t, "cockroach", "*.up.sql")
	var names []string
	for f := range byFile {
		names = append(names, f)
	}
	slices.Sort(names)
	var all []string
	for _, f := range names {
		all = append(all, byFile[f]...)
	}
	if len(all) == 0 || !strings.HasPrefix(all[0], "CREATE TABLE") {
		t.Fatalf("cockroach up files: %d statements", len(all))
	}
	return all
}
