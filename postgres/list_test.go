package postgres

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestUUIDList_IsTheArrayLiteralOfTheCanonicalForms(t *testing.T) {
	t.Parallel()
	ids := []uuid.UUID{uuid.Must(uuid.NewV7()), uuid.Nil, uuid.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff"), uuid.New()}
	var want []string
	for _, id := range ids {
		want = append(want, id.String())
	}
	for n := 1; n <= len(ids); n++ {
		got := theDialect.UUIDList(ids[:n])
		if w := "{" + strings.Join(want[:n], ",") + "}"; got != w {
			t.Errorf("UUIDList(%d ids) = %v, want %s", n, got, w)
		}
	}
}
