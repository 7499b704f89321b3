package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/payloadtest"
	"github.com/plenumdb/plenum/sqlite"
)

// Payloads and results come back byte for byte: JSON is TEXT.
func TestPayloads_RoundTripByteExact(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "payload.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	payloadtest.Run(t, payloadtest.Config{Dialect: sqlite.Dialect(), DB: db, Want: payloadtest.Exact})
}
