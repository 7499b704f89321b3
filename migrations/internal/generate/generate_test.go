package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plenumdb/plenum/migrations"
)

// The dialects the generator writes are the registered ones, and they are
// exactly the dialects whose generated files are checked in: a dialect
// that registers gets its files, and files of a dialect no longer linked
// are noticed.
func TestDialects_AreTheRegistryAndTheCheckedInDirectories(t *testing.T) {
	t.Parallel()
	var registered []string
	for _, d := range Dialects() {
		registered = append(registered, d.Name())
	}
	if !slices.IsSorted(registered) || len(registered) < 4 {
		t.Fatalf("Dialects() = %v, want every built-in dialect, sorted", registered)
	}
	root := filepath.Join("..", "..")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var checkedIn []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.sql"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.HasPrefix(b, []byte(migrations.GeneratedHeader+"\n")) {
				checkedIn = append(checkedIn, e.Name())
				break
			}
		}
	}
	if !slices.Equal(registered, checkedIn) {
		t.Errorf("registered dialects %v, checked-in migration directories %v: run go generate ./migrations", registered, checkedIn)
	}
}
