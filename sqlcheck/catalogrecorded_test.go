package sqlcheck

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/catalog"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// storeTable matches a statement's use of one of a store's tables (read
// from, written into, updated, joined), capturing the prefix: the tables
// the core's statements work on. A table named in a string literal (a
// dialect's probe of information_schema) is not a use.
var storeTable = regexp.MustCompile(`(?i)\b(?:FROM|INTO|UPDATE|JOIN)\s+((?:[a-z]{2}[0-9a-f]{8}|bench_[0-9a-f]{6}|plenum)_)(?:items|processes|barriers|attempts|queues|schedules)\b`)

// offsetCount matches the literal microsecond count of a clock offset, as
// the dialects write it (PostgreSQL's and CockroachDB's interval, MySQL's
// INTERVAL).
var offsetCount = regexp.MustCompile(`(?i)\binterval '?(-?[0-9]+) microseconds?'?`)

// notCore are the statements on a store's tables that reach the server
// from something other than the core, as whole shapes (Normalize, with
// '?' for every placeholder and * for any text), and what sends them.
// Nothing else on those tables may be missing from the catalog.
var notCore = []struct{ shape, sender string }{
	{"SELECT queue, state, COUNT(*) FROM plenum_items GROUP BY queue, state", "plenum inspect"},
	{"SELECT COUNT(*) FROM plenum_processes", "plenum inspect"},
	{"SELECT COUNT(*) FROM plenum_barriers", "plenum inspect"},
	{"SELECT id, name, host, pid, started_at, last_heartbeat_at FROM plenum_processes ORDER BY last_heartbeat_at, id LIMIT 1", "plenum inspect"},
	{"SELECT id, name, expected, arrived, failed, sealed, fired_at, join_item_id FROM plenum_barriers ORDER BY created_at DESC, id DESC LIMIT 1", "plenum inspect"},
	// The suite's own reads and writes (conformance/conformance.go,
	// fanout.go, keys.go, attempts.go, recovery.go, faults.go): counts it checks,
	// and a row it plants to hold a child's key, then removes.
	{"SELECT COUNT(*) FROM plenum_items WHERE join_barrier_id = ?", "the suite"},
	{"SELECT COUNT(*) FROM plenum_items WHERE barrier_id = ?", "the suite"},
	{"INSERT INTO plenum_items (id, queue, kind, unique_key, priority, state, available_at, attempt, max_attempts, crash_count, created_at) VALUES (?, ?, 'x', ?, 0, 'available', *, 0, 1, 0, *)", "the suite"},
	{"DELETE FROM plenum_items WHERE id = ?", "the suite"},
	{"SELECT COUNT(*) FROM plenum_attempts", "the suite"},
	{"SELECT COUNT(*) FROM plenum_attempts WHERE outcome = 'crash'", "the suite"},
	{"SELECT COUNT(*) FROM plenum_items i WHERE crash_count <> (SELECT COUNT(*) FROM plenum_attempts a WHERE a.item_id = i.id AND a.outcome = 'crash')", "the suite"},
	// names.go: a queue and kind stored as an older version could store
	// them, before the rules for names.
	{"UPDATE plenum_items SET queue = ?, kind = ? WHERE id = ?", "the suite"},
	// faults.go: the barrier a fault left, and history outliving its items.
	{"SELECT id FROM plenum_barriers", "the suite"},
	{"SELECT COUNT(*) FROM plenum_attempts a WHERE NOT EXISTS (SELECT 1 FROM plenum_items i WHERE i.id = a.item_id)", "the suite"},
	// flow.go: the claimed items of each key, sampled while claimers run;
	// uniquekeys.go and storedschedules.go: the items holding a key, and
	// the kind of a stored schedule's tick.
	{"SELECT flow_key, COUNT(*) FROM plenum_items WHERE queue = ? AND state = 'claimed' GROUP BY flow_key", "the suite"},
	{"SELECT COUNT(*) FROM plenum_items WHERE queue = ? AND unique_key = ?", "the suite"},
	{"SELECT kind FROM plenum_items WHERE queue = ? AND unique_key = ?", "the suite"},
	// itemmeta.go: tags and metadata outliving their items.
	{"SELECT COUNT(*) FROM plenum_item_meta WHERE NOT EXISTS (SELECT 1 FROM plenum_items i WHERE i.id = plenum_item_meta.item_id)", "the suite"},
}

// notCoreSender returns what sends shape, from notCore, or "".
func notCoreSender(shape string) string {
	shape = strings.ReplaceAll(shape, "$1", "?")
	for _, nc := range notCore {
		parts := strings.Split(nc.shape, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		if regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(shape) {
			return nc.sender
		}
	}
	return ""
}

// checkRecordedInCatalog fails t for every statement rec recorded that
// uses a store's tables and is neither the rendering of a core catalog
// entry (for d, the prefix it names and the clock offset it carries) nor
// one of the migrations' statements for that prefix nor one of notCore.
// That is how the catalog is known complete: a template the core sends
// that is missing from it fails here, on whichever statement the suite
// reached it with. It returns how many recorded statements each catalog
// entry matched.
func checkRecordedInCatalog(t *testing.T, rec *Recorder, d dialect.Dialect) map[string]int {
	t.Helper()
	start := time.Now()
	type key struct {
		prefix string
		offset int64
	}
	cats := map[key]*catalog.Catalog{}
	catalogOf := func(k key) *catalog.Catalog {
		if c, ok := cats[k]; ok {
			return c
		}
		c, err := catalog.New(d, core.Options{Prefix: k.prefix, ClockOffset: time.Duration(k.offset) * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		cats[k] = c
		return c
	}
	migrated := map[string]bool{}
	ownMigrations := func(prefix string) {
		if migrated["@"+prefix] {
			return
		}
		migrated["@"+prefix] = true
		for _, m := range migrations.All(prefix) {
			up, down := migrations.Statements(d, m)
			for _, s := range append(up, down...) {
				migrated[s] = true
			}
		}
	}
	used := map[string]int{}
	missing := map[string]int{}
	owned := map[string]int{}
	onStore := 0
next:
	for raw, n := range rec.Statements() {
		m := storeTable.FindStringSubmatch(raw)
		if m == nil {
			continue
		}
		onStore += n
		prefix := m[1]
		ownMigrations(prefix)
		if migrated[raw] {
			owned["migrations"] += n
			continue
		}
		offsets := []int64{0}
		for _, o := range offsetCount.FindAllStringSubmatch(raw, -1) {
			if v, err := strconv.ParseInt(o[1], 10, 64); err == nil {
				offsets = append(offsets, v)
			}
		}
		for _, off := range offsets {
			if st, ok := catalogOf(key{prefix, off}).Match(raw); ok {
				used[st.Name] += n
				continue next
			}
		}
		shape := Normalize(raw)
		if sender := notCoreSender(shape); sender != "" {
			owned[sender] += n
			continue
		}
		missing[shape] += n
	}
	for _, s := range Sorted(missing) {
		t.Errorf("%d× sent on a store's tables, and in no catalog entry, migration or listed sender: %.400s", missing[s], s)
	}
	t.Logf("%d statements on a store's tables in %v: %d catalog templates matched, the rest sent by %v", onStore, time.Since(start).Round(time.Millisecond), len(used), owned)
	return used
}
