package sqlcheck

import (
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// plantedRun is a statement sent to the stand-in server, which must run
// it, with its arguments, and whether the check must refuse it.
type plantedRun struct {
	sql    string
	args   []any
	refuse bool
}

// runPlanted runs each statement on one session through rec's server,
// failing t if the server refuses one, then checks that check refuses
// exactly the statements marked so, as recorded.
func runPlanted(t *testing.T, db *sql.DB, rec *Recorder, runs []plantedRun, check func(string) error) {
	t.Helper()
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, r := range runs {
		rows, err := conn.QueryContext(ctx, r.sql, r.args...)
		if err != nil {
			t.Fatalf("the stand-in server refused %s: %v", r.sql, err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatalf("the stand-in server refused %s: %v", r.sql, err)
		}
	}
	recorded := rec.Statements()
	for _, r := range runs {
		if recorded[r.sql] == 0 {
			t.Errorf("not recorded: %s", r.sql)
			continue
		}
		err := check(Normalize(r.sql))
		if r.refuse && err == nil {
			t.Errorf("ran on the stand-in server and passed the check, but must be refused: %s", r.sql)
		}
		if r.refuse && err != nil {
			t.Logf("refused, as it must be: %s\n\t%v", r.sql, err)
		}
		if !r.refuse && err != nil {
			t.Errorf("refused: %v\n%s", err, r.sql)
		}
	}
}

// MariaDB runs all of these; MySQL 8 refuses the marked ones (RETURNING
// is MariaDB's; tx_isolation was removed in 8.0; MariaDB 10.3+ allows an
// UPDATE to read its own table in a subquery, MySQL raises 1093; CREATE
// INDEX IF NOT EXISTS is MariaDB's). Passing the suite on MariaDB proves
// nothing about such statements: the check must catch them.
func TestRecorded_MySQL8RefusesWhatMariaDBRuns(t *testing.T) {
	t.Parallel()
	s := newMySQLSetup(t)
	if s == nil {
		return
	}
	db, err := sql.Open(mysql.DriverName, s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runPlanted(t, db, s.rec, []plantedRun{
		{sql: "CREATE TEMPORARY TABLE plenum_planted (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)"},
		{sql: "INSERT INTO plenum_planted (id, v) VALUES (?, 1)", args: []any{1}},
		{sql: "SELECT @@SESSION.tx_isolation", refuse: true},
		{sql: "SELECT @@SESSION.tx_read_only", refuse: true},
		{sql: "INSERT INTO plenum_planted (id, v) VALUES (?, 1) RETURNING id", args: []any{2}, refuse: true},
		{sql: "DELETE FROM plenum_planted WHERE id = ? RETURNING id", args: []any{2}, refuse: true},
		{sql: "UPDATE plenum_planted SET v = v + 1 WHERE id IN (SELECT id FROM plenum_planted WHERE v > ?)", args: []any{0}, refuse: true},
		{sql: "CREATE INDEX IF NOT EXISTS plenum_planted_v ON plenum_planted (v)", refuse: true},
		{sql: "DROP TEMPORARY TABLE plenum_planted"},
	}, func(stmt string) error { _, err := CheckMySQL8(stmt); return err })
}

// PostgreSQL runs all of these; CockroachDB refuses MERGE and LOCK TABLE,
// and the claim check refuses a claim without SKIP LOCKED, which
// PostgreSQL runs as a claim that waits.
func TestRecorded_CockroachRefusesWhatPostgreSQLRuns(t *testing.T) {
	t.Parallel()
	s := newPGSetup(t)
	if s == nil {
		return
	}
	db, err := sql.Open(postgres.DriverName, s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(stmt string) error { _, err := CheckCockroach(stmt); return err }
	runPlanted(t, db, s.rec, []plantedRun{
		{sql: "CREATE TEMPORARY TABLE plenum_planted (id int PRIMARY KEY, v int NOT NULL)"},
		{sql: "INSERT INTO plenum_planted (id, v) VALUES ($1, 1)", args: []any{1}},
		{sql: "MERGE INTO plenum_planted t USING (SELECT 2 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 1)", refuse: true},
		{sql: "WITH c AS (SELECT id FROM plenum_planted ORDER BY id LIMIT 1 FOR UPDATE) UPDATE plenum_planted SET v = v + 1 WHERE id IN (SELECT id FROM c) RETURNING id", refuse: true},
		{sql: "WITH c AS (SELECT id FROM plenum_planted ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE plenum_planted SET v = v + 1 WHERE id IN (SELECT id FROM c) RETURNING id"},
		{sql: "BEGIN"},
		{sql: "LOCK TABLE plenum_planted IN SHARE MODE", refuse: true},
		{sql: "COMMIT"},
		{sql: "DROP TABLE plenum_planted"},
	}, check)
}
