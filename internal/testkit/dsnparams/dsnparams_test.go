package dsnparams

import (
	"strings"
	"testing"
)

func TestPostgres_BothForms(t *testing.T) {
	t.Parallel()
	got := Postgres(t, "postgres://u@h:5432/db?sslmode=disable", map[string]string{"search_path": "s"})
	if got != "postgres://u@h:5432/db?search_path=s&sslmode=disable" {
		t.Errorf("URL form: %s", got)
	}
	got = Postgres(t, "host=h dbname=db", map[string]string{"search_path": "it's"})
	if !strings.HasSuffix(got, ` search_path='it\'s'`) {
		t.Errorf("keyword/value form: %s", got)
	}
}
