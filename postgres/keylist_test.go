package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/postgres"
)

// oddKeys are flow keys that a text[] literal must quote: its own
// punctuation, quotes and backslashes, a word it reads as NULL, spaces
// it would trim, and text outside ASCII.
var oddKeys = []string{`a"b`, `c\d`, `\`, `"`, `{x,y}`, `NULL`, ` spaced `, `ü-ß`, `a,b`, `'quoted'`}

// TestKeyList_ServerReadsEachKeyBack binds oddKeys and their counts as
// KeyList binds them and has the server unnest them: each key and count
// comes back as it went.
func TestKeyList_ServerReadsEachKeyBack(t *testing.T) {
	db, _ := explainTables(t)
	counts := make([]int, len(oddKeys))
	for i := range counts {
		counts[i] = i + 1
	}
	keyList, countList := postgres.Dialect().(dialect.KeyLister).KeyList(oddKeys, counts)
	rows, err := db.QueryContext(t.Context(), "SELECT k, n FROM unnest(CAST($1 AS text[]), CAST($2 AS integer[])) AS u(k, n)", keyList, countList)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	var ns []int
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		keys, ns = append(keys, k), append(ns, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, oddKeys) || !slices.Equal(ns, counts) {
		t.Errorf("the server read keys %q and counts %v, want %q and %v", keys, ns, oddKeys, counts)
	}
}

// TestKeyList_ClaimTakesItemsOfOddKeys claims items whose flow keys need
// quoting: the claim of their lanes' items, which binds the keys as a
// list, takes every one.
func TestKeyList_ClaimTakesItemsOfOddKeys(t *testing.T) {
	ctx, st, _, _, _ := twoProcesses(t)
	for _, k := range oddKeys {
		for range 2 {
			if _, err := st.Enqueue(ctx, core.ItemSpec{Queue: "odd", Kind: "k", FlowKey: k}); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for range 2 * len(oddKeys) {
		claims, err := st.Claim(ctx, core.ClaimParams{Queue: "odd", Owner: owner, Limit: 100, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			got[c.FlowKey]++
		}
		if len(claims) == 0 {
			break
		}
	}
	for _, k := range oddKeys {
		if got[k] != 2 {
			t.Errorf("key %q: %d items claimed, want 2 (claimed: %v)", k, got[k], got)
		}
	}
}
