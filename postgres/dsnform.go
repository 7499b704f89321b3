package postgres

import "strings"

// keywords begin the keyword/value form of a PostgreSQL DSN
// ("host=localhost dbname=jobs"), which libpq and pgx read.
var keywords = []string{"host=", "hostaddr=", "port=", "dbname=", "user=", "password=", "sslmode=", "service="}

// isKeywordDSN reports whether dsn is in the keyword/value form: for
// dialect.ForDSN, which tells the dialect from a DSN alone.
func isKeywordDSN(dsn string) bool {
	for _, word := range strings.Fields(dsn) {
		for _, k := range keywords {
			if strings.HasPrefix(strings.ToLower(word), k) {
				return true
			}
		}
	}
	return false
}
