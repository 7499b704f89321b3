// Package generate writes the SQL files checked in under migrations/, one
// directory per dialect. It is shared by the go:generate command and the
// test that checks the files are up to date, so that both use one list.
package generate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin" // every dialect the module ships registers itself
	"github.com/plenumdb/plenum/migrations"
)

// Format is the file format of the checked-in files.
const Format = migrations.FormatPlain

// Dialects lists the dialects whose files are checked in: every registered
// one, sorted by name. A new dialect package gets its files by registering
// itself (and being linked through dialect/builtin); nothing here changes.
func Dialects() []dialect.Dialect {
	regs := dialect.Registrations()
	out := make([]dialect.Dialect, len(regs))
	for i, r := range regs {
		out[i] = r.Dialect
	}
	return out
}

// Run writes <out>/<dialect name>/ for every dialect of Dialects, with the
// default prefix, and removes generated files there that it no longer
// writes (a renamed migration). It returns the paths it wrote.
func Run(out string) ([]string, error) {
	var all []string
	for _, d := range Dialects() {
		dir := filepath.Join(out, d.Name())
		paths, err := migrations.WriteFiles(dir, d, migrations.DefaultPrefix, Format)
		if err != nil {
			return all, fmt.Errorf("%s: %w", d.Name(), err)
		}
		all = append(all, paths...)
		if err := removeStale(dir, paths); err != nil {
			return all, fmt.Errorf("%s: %w", d.Name(), err)
		}
	}
	return all, nil
}

// removeStale removes the generated .sql files in dir that are not in keep.
// Files without the generated header are someone else's and stay.
func removeStale(dir string, keep []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, p := range keep {
		kept[filepath.Base(p)] = true
	}
	for _, e := range entries {
		if e.IsDir() || kept[e.Name()] || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte(migrations.GeneratedHeader+"\n")) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}
