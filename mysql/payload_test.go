package mysql_test

import (
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/payloadtest"
	"github.com/plenumdb/plenum/mysql"
)

// Payloads and results come back byte for byte: JSON is LONGTEXT, not
// MySQL's JSON type, which would rewrite them.
func TestPayloads_RoundTripByteExact(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	if db == nil {
		return
	}
	payloadtest.Run(t, payloadtest.Config{Dialect: mysql.Dialect(), DB: db, Want: payloadtest.Exact})
}
