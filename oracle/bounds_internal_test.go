package oracle

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// TestTCPBounds_DefaultsAndConnectTimeout checks the bounds Open dials
// with: sqlkit.DefaultTCPBounds where the DSN sets nothing, go-ora's
// CONNECTION TIMEOUT (or CONNECT TIMEOUT, any case) as the connect bound,
// a value that is no number refused; and that the *sql.DB of the bounded
// connector talks through go-ora, as the dialect's Check requires.
func TestTCPBounds_DefaultsAndConnectTimeout(t *testing.T) {
	for dsn, want := range map[string]time.Duration{
		"oracle://u:p@db:1521/svc":                          10 * time.Second,
		"oracle://u:p@db:1521/svc?CONNECTION%20TIMEOUT=3":   3 * time.Second,
		"oracle://u:p@db:1521/svc?connect+timeout=7&SSL=on": 7 * time.Second,
		"oracle://u:p@db:1521/svc?CONNECTION%20TIMEOUT=0":   10 * time.Second,
	} {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tcpBounds(u)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		wantB := sqlkit.DefaultTCPBounds
		wantB.Connect = want
		if b != wantB {
			t.Errorf("%s: bounds %+v, want %+v", dsn, b, wantB)
		}
	}
	if _, err := Open("oracle://u:p@db:1521/svc?CONNECTION%20TIMEOUT=soon"); err == nil || !strings.Contains(err.Error(), "CONNECTION TIMEOUT") {
		t.Errorf("CONNECTION TIMEOUT=soon: %v", err)
	}
	db := sql.OpenDB(connector("oracle://u:p@db:1521/svc", sqlkit.DefaultTCPBounds))
	defer db.Close()
	if _, ok := db.Driver().(*goora.OracleDriver); !ok {
		t.Errorf("the bounded connector's driver is %T, not go-ora's", db.Driver())
	}
}
