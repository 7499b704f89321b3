package mysql

import "strings"

// isDriverDSN reports whether dsn is in go-sql-driver's form, a network
// and address in parentheses after the credentials
// (user:password@tcp(host:3306)/db): for dialect.ForDSN, which tells the
// dialect from a DSN alone.
func isDriverDSN(dsn string) bool {
	s := strings.ToLower(dsn)
	for _, network := range []string{"tcp(", "unix("} {
		if strings.HasPrefix(s, network) || strings.Contains(s, "@"+network) {
			return true
		}
	}
	return false
}
