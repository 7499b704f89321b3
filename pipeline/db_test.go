package pipeline_test

import (
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/pipeline/pipelinesuite"
)

// databases are SQLite, PostgreSQL and MySQL/MariaDB (package testdb).
var databases = testdb.All("pipeline.db")

// TestSuite runs the pipelines' shared suite (package pipelinesuite) on
// every database.
func TestSuite(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			pipelinesuite.Run(t, pipelinesuite.Config{Dialect: db.Dialect, Open: db.Open})
		})
	}
}
