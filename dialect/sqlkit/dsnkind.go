package sqlkit

import "strings"

// DSNKind names the kind of database whose DSN syntax dsn has, when it has
// one of the unmistakable forms: a URL scheme ("postgres", "postgresql",
// "mysql", "oracle", "cockroachdb", "sqlite", "file") or go-sql-driver's
// network-address form (user@tcp(host:3306)/db, which is "mysql"). It
// returns "" for anything else: a file path, PostgreSQL's key=value form, a
// URL of an unknown scheme. A dialect handed another database's DSN uses it
// to say so, instead of passing on its parser's puzzled error; the answer
// never contains any part of dsn (which may hold a password).
func DSNKind(dsn string) string {
	s := strings.ToLower(strings.TrimSpace(dsn))
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		switch scheme {
		case "postgres", "postgresql":
			return "postgres"
		case "mysql", "mariadb":
			return "mysql"
		case "oracle":
			return "oracle"
		case "cockroachdb", "cockroach":
			return "cockroach"
		case "sqlite", "sqlite3", "file":
			return "sqlite"
		}
		return ""
	}
	if strings.HasPrefix(s, "file:") {
		return "sqlite"
	}
	if strings.Contains(s, "@tcp(") || strings.Contains(s, "@unix(") || strings.HasPrefix(s, "tcp(") || strings.HasPrefix(s, "unix(") {
		return "mysql"
	}
	return ""
}
