package sqlcheck

import (
	"strings"
	"testing"
)

// Statements each check must refuse, planted to show that it bites. Each
// names what in the error shows the refusal came from the check meant.

func TestCockroach_RefusesPlantedStatements(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, sql, want string }{
		{"MERGE, which CockroachDB does not have", "MERGE INTO plenum_items t USING src s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)", "syntax error"},
		{"a misspelt SKIP LOKED", "WITH c AS (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY priority, id LIMIT 10 FOR UPDATE SKIP LOKED) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) RETURNING id", "syntax error"},
		{"a claim without SKIP LOCKED", "WITH c AS (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY priority, id LIMIT 10 FOR UPDATE) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) RETURNING id", "not locked FOR UPDATE SKIP LOCKED"},
		{"a claim without a lock", "UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY priority, id LIMIT 10) RETURNING id", "not locked FOR UPDATE SKIP LOCKED"},
		{"a claim that waits (NOWAIT is not SKIP LOCKED)", "WITH c AS (SELECT id FROM plenum_items ORDER BY id LIMIT 1 FOR UPDATE NOWAIT) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c)", "not locked FOR UPDATE SKIP LOCKED"},
		{"MySQL's ON DUPLICATE KEY", "INSERT INTO plenum_items (id) VALUES ($1) ON DUPLICATE KEY UPDATE id = id", "syntax error"},
		{"lanes' reads under candidates that do not lock", "WITH c AS (SELECT id FROM plenum_items WHERE id IN (SELECT id FROM plenum_items WHERE flow_key = $1 ORDER BY priority, id LIMIT 3) ORDER BY id LIMIT 3) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) RETURNING id", "not locked FOR UPDATE SKIP LOCKED"},
		{"a lane's read beside the locked candidates, not in them", "WITH l AS (SELECT id FROM plenum_items WHERE flow_key = $1 ORDER BY priority, id LIMIT 3), c AS (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 3 FOR UPDATE SKIP LOCKED) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) OR id IN (SELECT id FROM l) RETURNING id", "not locked FOR UPDATE SKIP LOCKED"},
	} {
		if _, err := CheckCockroach(c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckCockroach = %v, want an error with %q\n%s", c.name, err, c.want, c.sql)
		}
	}
	// The real claim shape passes, and counts as a claim.
	claim, err := CheckCockroach("WITH c AS (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY priority, id LIMIT 10 FOR UPDATE SKIP LOCKED) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) RETURNING id")
	if err != nil || !claim {
		t.Errorf("the claim shape: claim %v, %v", claim, err)
	}
	// So does a claim of lanes' first items: each lane's read, ordered
	// and limited, only names rows for the candidates, which lock them.
	claim, err = CheckCockroach("WITH c AS (SELECT id FROM plenum_items WHERE state = 'available' AND id IN (SELECT id FROM (SELECT id FROM plenum_items WHERE flow_key = $1 ORDER BY priority, id LIMIT 3) p0) ORDER BY id LIMIT 3 FOR UPDATE SKIP LOCKED) UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM c) RETURNING id")
	if err != nil || !claim {
		t.Errorf("the claim of lanes' items: claim %v, %v", claim, err)
	}
}

// The schema facts of the generated DDL are refused when one is planted
// wrong: an index the schema marks Sequential without USING HASH, a UUID
// primary key without it, a partial index without its predicate.
func TestCockroachSchema_RefusesPlantedDDL(t *testing.T) {
	t.Parallel()
	good := cockroachUpStatements(t)
	if err := CheckCockroachSchema(good, "plenum_"); err != nil {
		t.Fatalf("the generated DDL: %v", err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"a Sequential index without USING HASH", "plenum_items (lease_expires_at) USING HASH", "plenum_items (lease_expires_at)", "plenum_items_lease: hash-sharded (USING HASH) false"},
		{"a UUID primary key without USING HASH", "PRIMARY KEY (id) USING HASH\n)", "PRIMARY KEY (id)\n)", "primary key hash-sharded: false"},
		{"a partial index without its predicate", "(queue, priority, available_at, id) WHERE state = 'available' AND flow_key IS NULL", "(queue, priority, available_at, id)", "plenum_items_claim: partial (WHERE) false"},
		{"a predicate on another column", "WHERE state = 'available'", "WHERE kind = 'available'", "predicate"},
		{"a hash-sharded index the schema does not mark Sequential", "plenum_items_owner ON plenum_items (claimed_by)", "plenum_items_owner ON plenum_items (claimed_by) USING HASH", "plenum_items_owner: hash-sharded (USING HASH) true"},
	} {
		planted := make([]string, len(good))
		hit := false
		for i, s := range good {
			planted[i] = strings.Replace(s, c.from, c.to, 1)
			hit = hit || planted[i] != s
		}
		if !hit {
			t.Errorf("%s: %q is not in the generated DDL", c.name, c.from)
			continue
		}
		if err := CheckCockroachSchema(planted, "plenum_"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckCockroachSchema = %v, want an error with %q", c.name, err, c.want)
		}
	}
	// A table or index missing altogether is refused too.
	for _, missing := range []string{"CREATE TABLE IF NOT EXISTS plenum_items ", "CREATE TABLE IF NOT EXISTS plenum_migrations ", "CREATE INDEX IF NOT EXISTS plenum_items_lease "} {
		var fewer []string
		for _, s := range good {
			if !strings.HasPrefix(s, missing) {
				fewer = append(fewer, s)
			}
		}
		if len(fewer) != len(good)-1 {
			t.Errorf("%q: %d statements of %d left", missing, len(fewer), len(good))
			continue
		}
		if err := CheckCockroachSchema(fewer, "plenum_"); err == nil || !strings.Contains(err.Error(), "no CREATE") {
			t.Errorf("DDL without %q: CheckCockroachSchema = %v", missing, err)
		}
	}
}

func TestMySQL8_RefusesPlantedStatements(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, sql, want string }{
		{"a partial index", "CREATE INDEX plenum_items_claim ON plenum_items (queue, priority) WHERE state = 'available'", "syntax error"},
		{"UPDATE ... RETURNING (MariaDB has none either; MySQL has no RETURNING at all)", "UPDATE plenum_items SET state = 'claimed' WHERE id IN (?) RETURNING id", "syntax error"},
		{"INSERT ... RETURNING (MariaDB 10.5+ only)", "INSERT INTO plenum_items (id) VALUES (?) RETURNING id", "syntax error"},
		{"DELETE ... RETURNING (MariaDB only)", "DELETE FROM plenum_items WHERE id = ? RETURNING id", "syntax error"},
		{"CREATE INDEX IF NOT EXISTS (MariaDB only)", "CREATE INDEX IF NOT EXISTS plenum_items_lease ON plenum_items (state, lease_expires_at)", "syntax error"},
		{"tx_isolation, removed in MySQL 8", "SELECT @@SESSION.tx_isolation", "tx_isolation was removed"},
		{"SET tx_isolation", "SET SESSION tx_isolation = 'READ-COMMITTED'", "tx_isolation was removed"},
		{"tx_read_only", "SELECT @@tx_read_only", "tx_read_only was removed"},
		{"the query cache", "SELECT @@GLOBAL.query_cache_size", "query_cache_size was removed"},
		{"information_schema.GLOBAL_VARIABLES", "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'log_bin'", "removed in MySQL 8.0"},
		{"PASSWORD()", "SELECT PASSWORD('x')", "PASSWORD() was removed"},
		{"a 1093 subquery", "UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM plenum_items WHERE state = 'available')", "error 1093"},
		{"a 1093 subquery in SET", "UPDATE plenum_barriers SET arrived = (SELECT MAX(arrived) FROM plenum_barriers) WHERE id = ?", "error 1093"},
		{"a 1093 DELETE", "DELETE FROM plenum_items WHERE id IN (SELECT id FROM plenum_items WHERE state = 'dead')", "error 1093"},
		{"a 1093 through a derived table MySQL merges", "UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM (SELECT id FROM plenum_items WHERE state = 'available') t)", "error 1093"},
		{"PostgreSQL's casts", "SELECT payload::text FROM plenum_items WHERE id = ?", "syntax error"},
		{"PostgreSQL's ON CONFLICT", "INSERT INTO plenum_items (id) VALUES (?) ON CONFLICT DO NOTHING", "syntax error"},
		{"a claim without SKIP LOCKED", "SELECT id FROM plenum_items WHERE state = 'available' AND queue = ? ORDER BY priority, available_at, id LIMIT 10 FOR UPDATE", "not FOR UPDATE SKIP LOCKED"},
		{"a claim that waits (NOWAIT)", "SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 10 FOR UPDATE NOWAIT", "not FOR UPDATE SKIP LOCKED"},
		{"a claim that shares (LOCK IN SHARE MODE)", "SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 10 LOCK IN SHARE MODE", "not FOR UPDATE SKIP LOCKED"},
		{"a misspelt SKIP LOKED", "SELECT id FROM plenum_items ORDER BY id LIMIT 10 FOR UPDATE SKIP LOKED", "syntax error"},
	} {
		if _, err := CheckMySQL8(c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckMySQL8 = %v, want an error with %q\n%s", c.name, err, c.want, c.sql)
		}
	}
	// The claim's SELECT counts as a claim; a fence's lock by key does not.
	if claim, err := CheckMySQL8("SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED"); !claim || err != nil {
		t.Errorf("the claim's SELECT: claim %v, %v", claim, err)
	}
	if claim, err := CheckMySQL8("SELECT id, barrier_id FROM plenum_items WHERE id IN (?) AND claim_token = ? ORDER BY id FOR UPDATE"); claim || err != nil {
		t.Errorf("a fence's lock: claim %v, %v", claim, err)
	}
	// What MySQL 8 accepts passes: the derived-table forms it
	// materializes, the claim, the lock, transaction_isolation.
	for _, sql := range []string{
		"UPDATE plenum_items SET state = 'claimed' WHERE id IN (SELECT id FROM (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 10) t)",
		"UPDATE plenum_items r JOIN (SELECT id FROM plenum_items WHERE state = 'available' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED) t ON r.id = t.id SET r.state = 'claimed'",
		"UPDATE plenum_barriers SET arrived = arrived + (SELECT COUNT(*) FROM plenum_items WHERE barrier_id = ?) WHERE id = ?",
		"SELECT id FROM plenum_items WHERE state = 'available' AND queue = ? ORDER BY priority, available_at, id LIMIT 10 FOR UPDATE SKIP LOCKED",
		"DELETE FROM plenum_attempts WHERE EXISTS (SELECT 1 FROM plenum_items i WHERE i.id = plenum_attempts.item_id)",
		"SELECT GET_LOCK(?, ?)",
		"SELECT @@SESSION.transaction_isolation",
		"ALTER TABLE plenum_items ADD COLUMN k_on TINYINT GENERATED ALWAYS AS (CASE WHEN unique_key IS NOT NULL THEN 1 END) VIRTUAL, ADD UNIQUE INDEX k (queue, unique_key, k_on)",
	} {
		if _, err := CheckMySQL8(sql); err != nil {
			t.Errorf("CheckMySQL8(%s) = %v, want nil", sql, err)
		}
	}
}
