package sqlkit

import (
	"strconv"
	"strings"
)

// RebindQuestion returns query unchanged: the '?' style of SQLite and MySQL.
func RebindQuestion(query string) string { return query }

// RebindNumbered rewrites '?' placeholders as prefix followed by their
// 1-based position: "$1, $2" for PostgreSQL (prefix "$"), ":1, :2" for Oracle
// (prefix ":"). Placeholders inside single-quoted literals, double-quoted
// identifiers and comments are left alone.
func RebindNumbered(query, prefix string) string {
	if strings.IndexByte(query, '?') < 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(query) {
				j = len(query) - 1
			}
			b.WriteString(query[i : j+1])
			i = j
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				j := strings.IndexByte(query[i:], '\n')
				if j < 0 {
					j = len(query) - i - 1
				}
				b.WriteString(query[i : i+j+1])
				i += j
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteString(prefix)
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Placeholders returns "?, ?, ..." with n placeholders, for IN lists.
func Placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}
