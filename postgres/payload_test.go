package postgres_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/payloadtest"
	"github.com/plenumdb/plenum/postgres"
)

// Payloads and results come back as jsonb gives them: the same document,
// normalised (spacing, key order, duplicate keys, number spelling).
func TestPayloads_RoundTripNormalisedByJsonb(t *testing.T) {
	t.Parallel()
	db := conformance.Opener(postgres.DriverName, harness.DSN(t))(t)
	payloadtest.Run(t, payloadtest.Config{Dialect: postgres.Dialect(), DB: db,
		Want: func(doc string) string { return payloadtest.Jsonb[doc] }})
}
