package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// TestCompletionBatches_BoundedByCountAndBytes checks that completions are
// split by the IN-list limit and, where the database bounds a statement's
// size, by the bytes of their results, keeping their order.
func TestCompletionBatches_BoundedByCountAndBytes(t *testing.T) {
	result := func(n int) []byte { return append(append([]byte(`"`), bytes.Repeat([]byte("x"), n-2)...), '"') }
	mk := func(sizes ...int) []Completion {
		cs := make([]Completion, len(sizes))
		for i, n := range sizes {
			cs[i].Result = result(n)
			cs[i].Claim.Priority = i // marks the order
		}
		return cs
	}
	for _, tc := range []struct {
		name  string
		caps  dialect.Capabilities
		sizes []int
		want  []int // batch lengths
	}{
		{"count only", dialect.Capabilities{MaxBindParams: 3*4 + 2}, []int{10, 10, 10, 10, 10, 10, 10, 10, 10}, []int{4, 4, 1}},
		{"bytes", dialect.Capabilities{MaxBindParams: 65535, MaxStatementBytes: 3000}, []int{1000, 1000, 1000, 500, 3000, 10}, []int{2, 2, 1, 1}},
		{"one over the limit goes alone", dialect.Capabilities{MaxBindParams: 65535, MaxStatementBytes: 1000}, []int{5000, 10}, []int{1, 1}},
		{"no byte limit", dialect.Capabilities{MaxBindParams: 65535}, []int{1 << 20, 1 << 20, 1 << 20}, []int{3}},
	} {
		s := &Store{caps: tc.caps}
		got := s.completionBatches(mk(tc.sizes...))
		var lens []int
		next := 0
		for _, b := range got {
			lens = append(lens, len(b))
			for _, c := range b {
				if c.Claim.Priority != next {
					t.Fatalf("%s: completion %d out of order", tc.name, c.Claim.Priority)
				}
				next++
			}
		}
		if next != len(tc.sizes) || len(lens) != len(tc.want) {
			t.Fatalf("%s: batches %v, want %v", tc.name, lens, tc.want)
		}
		for i := range lens {
			if lens[i] != tc.want[i] {
				t.Fatalf("%s: batches %v, want %v", tc.name, lens, tc.want)
			}
		}
	}
}

// TestCompleteMany_RefusesBadCompletionsNamingThem checks that
// CompleteMany's checks, which format the field names only on an error,
// still name the completion they refuse, before touching the database.
func TestCompleteMany_RefusesBadCompletionsNamingThem(t *testing.T) {
	s := &Store{opts: Options{MaxPayloadBytes: DefaultMaxPayloadBytes}}
	good := Claim{Item: Item{ID: uuid.New()}, Token: uuid.New()}
	for _, tc := range []struct {
		name  string
		cs    []Completion
		field string
	}{
		{"no token", []Completion{{Claim: good}, {Claim: Claim{Item: Item{ID: uuid.New()}}}}, "completions[1].Claim"},
		{"twice", []Completion{{Claim: good}, {Claim: good}}, "completions[1].Claim"},
		{"result not JSON", []Completion{{Claim: good, Result: json.RawMessage("{")}}, "completions[0].Result"},
	} {
		_, err := s.CompleteMany(context.Background(), tc.cs)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: CompleteMany = %v, want an InputError on %s", tc.name, err, tc.field)
		}
	}
}
