// Package payloadtest is the test every dialect package runs to say how
// payloads and results come back: byte for byte, or normalised as the
// database's JSON type does (PostgreSQL's and CockroachDB's jsonb). It is
// internal to Plenum's tests.
package payloadtest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Documents are the payloads the test stores: spacing, key order,
// duplicate keys, numbers jsonb rewrites, escapes, nesting.
var Documents = []string{
	`{"user":42}`,
	`{"b":1,"a":2,"aa":3}`,
	`{"a":1,"a":2}`,
	`[1.50,1e2,-0,12345678901234567890123]`,
	`"\u00e9\u0041\n"`,
	` { "x" : [ true , null ] } `,
	`{"deep":{"list":[{"k":"v"},[]],"empty":{}}}`,
}

// Jsonb is what PostgreSQL's jsonb gives back for each of Documents: one
// space after ':' and ',', keys sorted (shorter first, then bytewise), the
// last of duplicate keys, numbers as numeric (1e2 is 100, -0 is 0, the
// scale of 1.50 kept), escapes decoded, outer spaces dropped.
var Jsonb = map[string]string{
	`{"user":42}`:                                 `{"user": 42}`,
	`{"b":1,"a":2,"aa":3}`:                        `{"a": 2, "b": 1, "aa": 3}`,
	`{"a":1,"a":2}`:                               `{"a": 2}`,
	`[1.50,1e2,-0,12345678901234567890123]`:       `[1.50, 100, 0, 12345678901234567890123]`,
	`"\u00e9\u0041\n"`:                            `"éA\n"`,
	` { "x" : [ true , null ] } `:                 `{"x": [true, null]}`,
	`{"deep":{"list":[{"k":"v"},[]],"empty":{}}}`: `{"deep": {"list": [{"k": "v"}, []], "empty": {}}}`,
}

// Exact is the identity: the database gives back the bytes it was given.
func Exact(doc string) string { return doc }

// Config is the database under test and what it gives back.
type Config struct {
	Dialect dialect.Dialect
	DB      *sql.DB
	// Want maps a stored document to the one read back: Exact, or a
	// normalisation such as Jsonb's.
	Want func(doc string) string
}

// Run stores each document as a payload and as a result, and checks what
// Get and Claim return.
func Run(t *testing.T, c Config) {
	t.Helper()
	ctx := t.Context()
	p := fmt.Sprintf("pt%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, c.DB, c.Dialect, p); err != nil {
			t.Errorf("drop %s*: %v", p, err)
		}
	})
	s, err := core.Open(ctx, c.DB, c.Dialect, core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range Documents {
		want := c.Want(doc)
		queue := fmt.Sprintf("q%d", i)
		enq, err := s.Enqueue(ctx, core.ItemSpec{Queue: queue, Kind: "k", Payload: []byte(doc)})
		if err != nil {
			t.Fatalf("Enqueue(%s): %v", doc, err)
		}
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("Claim: %d, %v", len(cs), err)
		}
		if got := string(cs[0].Payload); got != want {
			t.Errorf("payload %s: Claim gives %s, want %s", doc, got, want)
		}
		if err := s.Complete(ctx, cs[0], []byte(doc)); err != nil {
			t.Fatalf("Complete(%s): %v", doc, err)
		}
		it, err := s.Get(ctx, enq[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(it.Payload); got != want {
			t.Errorf("payload %s: Get gives %s, want %s", doc, got, want)
		}
		if got := string(it.Result); got != want {
			t.Errorf("result %s: Get gives %s, want %s", doc, got, want)
		}
	}
}
