package sqlite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/sqlite"
)

// A path in a directory that does not exist is refused naming that
// directory (SQLite itself says only "unable to open database file"), and
// nothing is created on the way.
func TestOpen_MissingDirectoryNamed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "no", "such")
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err == nil {
		db.Close()
		t.Fatal("Open in a missing directory succeeded")
	}
	if want := "there is no directory " + dir; !strings.Contains(err.Error(), want) {
		t.Errorf("Open in a missing directory: %v; want it to say %q", err, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Open made the directory: %v", err)
	}
}
