package sqlite_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
)

// The list condition matches exactly the ids bound, whatever bytes they
// hold (a zero byte, the bytes of a quote), and reads the rows through the
// primary key rather than scanning the table.
func TestInUUIDs_MatchesExactlyTheBoundIDs(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := context.Background()
	lister, ok := d.(dialect.UUIDLister)
	if !ok {
		t.Fatal("the SQLite dialect binds no UUID lists")
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE list_t (id BLOB PRIMARY KEY, n INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	var all []uuid.UUID
	for i := range 300 {
		id := uuid.New()
		switch i {
		case 0:
			id = uuid.UUID{}
		case 1:
			copy(id[:], bytes.Repeat([]byte("'"), 16))
		case 2:
			id[15] = 0
		}
		all = append(all, id)
		if _, err := db.ExecContext(ctx, "INSERT INTO list_t (id, n) VALUES (?, ?)", d.UUID(id), i); err != nil {
			t.Fatal(err)
		}
	}
	query := "SELECT id FROM list_t WHERE " + lister.InUUIDs("id")
	if n := strings.Count(query, "?"); n != 1 {
		t.Fatalf("InUUIDs has %d placeholders, want 1", n)
	}
	absent := uuid.New()
	for _, want := range [][]uuid.UUID{all[:1], all[1:2], all[:3], all[5:105], all, {absent}, {all[7], absent, all[9]}} {
		rows, err := db.QueryContext(ctx, query, lister.UUIDList(want))
		if err != nil {
			t.Fatal(err)
		}
		var got []uuid.UUID
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			got = append(got, uuid.UUID(b))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		exp := slices.DeleteFunc(slices.Clone(want), func(u uuid.UUID) bool { return u == absent })
		cmp := func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }
		slices.SortFunc(got, cmp)
		slices.SortFunc(exp, cmp)
		if !slices.Equal(got, exp) {
			t.Errorf("%d ids bound: got %d rows %v, want %v", len(want), len(got), got, exp)
		}
	}

	text := queryPlan(t, db, "UPDATE list_t SET n = n + 1 WHERE "+lister.InUUIDs("id"), lister.UUIDList(all[:10]))
	if strings.Contains(text, "SCAN list_t") || !strings.Contains(text, "SEARCH list_t") {
		t.Errorf("the list condition does not read the table by its key:\n%s", text)
	}
	t.Logf("plan:\n%s", text)
}
