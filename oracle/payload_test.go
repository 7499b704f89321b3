package oracle_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/payloadtest"
	"github.com/plenumdb/plenum/oracle"
)

// Payloads and results should come back byte for byte: JSON is a CLOB
// with an IS JSON check, which stores the text as given. It runs where
// PLENUM_ORACLE_DSN names a server; it has never run here.
func TestPayloads_RoundTripByteExact(t *testing.T) {
	t.Parallel()
	db := conformance.Opener(oracle.DriverName, harness.DSN(t))(t)
	payloadtest.Run(t, payloadtest.Config{Dialect: oracle.Dialect(), DB: db, Want: payloadtest.Exact})
}
