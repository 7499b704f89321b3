package sqlcheck

import (
	"regexp"
	"strings"
)

// SplitFile returns the statements of a migration file, without their
// terminating semicolons: text between semicolons that stand outside
// string literals, quoted identifiers and dollar quotes, with comment
// lines (the generated header, goose's annotations) left out.
func SplitFile(content string) []string {
	var lines []string
	for _, l := range strings.Split(content, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	text := strings.Join(lines, "\n")
	var out []string
	start := 0
	var quote string // the open quote: ', ", ` or a dollar tag
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != "":
			if strings.HasPrefix(text[i:], quote) {
				i += len(quote) - 1
				quote = ""
			}
		case c == '\'' || c == '"' || c == '`':
			quote = string(c)
		case c == '$':
			if m := dollarTag.FindString(text[i:]); m != "" {
				quote = m
				i += len(m) - 1
			}
		case c == ';':
			if s := strings.TrimSpace(text[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

var dollarTag = regexp.MustCompile(`^\$[A-Za-z_]*\$`)

var (
	// testPrefix matches the random table prefixes (and lock tables and
	// schemas) that tests and bench create: two letters and eight hex
	// digits, as conformance's "pc1a2b3c4d_" and the lock tables'
	// "pl1a2b3c4d_locks", and bench's "bench_1a2b3c_" and "base_1a2b3c_".
	testPrefix = regexp.MustCompile(`\b(?:[a-z]{2}[0-9a-f]{8}|bench_[0-9a-f]{6}|base_[0-9a-f]{6})_`)
	// ownSchema matches the schema the recording runs create.
	ownSchema = regexp.MustCompile(`\bsqlcheck_[0-9a-f]{8}\b`)
	// numbered matches PostgreSQL's numbered placeholders.
	numbered = regexp.MustCompile(`\$[0-9]+\b`)
	// inList matches an IN list of placeholders.
	inList = regexp.MustCompile(`(?i)\bIN \((?:\?|\$1)(?:, (?:\?|\$1))*\)`)
	// limit matches a LIMIT with a literal count.
	limit = regexp.MustCompile(`(?i)\bLIMIT [0-9]+\b`)
	// interval matches MySQL's INTERVAL with a literal count (the clock
	// offsets of tests).
	interval = regexp.MustCompile(`(?i)\bINTERVAL -?[0-9]+ MICROSECOND\b`)
	// pgInterval matches PostgreSQL's interval literals (likewise).
	pgInterval = regexp.MustCompile(`(?i)\binterval '-?[0-9]+ microseconds?'`)
)

// Normalize returns the shape of a statement: what two statements that
// differ only in batch size, table prefix or a literal count have in
// common, so that the set of distinct statements to parse stays small.
// Table prefixes become plenum_, numbered placeholders $1, an IN list of
// placeholders one placeholder, a run of identical parenthesised groups
// (the rows of a multi-row VALUES, the tuples of a row IN list) one group,
// and LIMIT and interval counts 1. The result means, to a grammar, what
// the statement meant.
func Normalize(stmt string) string {
	s := strings.TrimSpace(stmt)
	s = strings.TrimSuffix(s, ";")
	s = ownSchema.ReplaceAllString(s, "plenum_schema")
	s = testPrefix.ReplaceAllString(s, "plenum_")
	s = numbered.ReplaceAllString(s, "$$1")
	s = inList.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, "?") {
			return m[:len("IN")] + " (?)"
		}
		return m[:len("IN")] + " ($1)"
	})
	s = limit.ReplaceAllString(s, "LIMIT 1")
	s = interval.ReplaceAllString(s, "INTERVAL 1 MICROSECOND")
	s = pgInterval.ReplaceAllString(s, "interval '1 microseconds'")
	return collapseGroups(s)
}

// collapseGroups replaces every run "(g), (g), ..." of identical
// parenthesised groups, separated by commas, with its first group.
func collapseGroups(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '(' {
			if q := quotedEnd(s, i); q > i {
				b.WriteString(s[i:q])
				i = q
				continue
			}
			b.WriteByte(s[i])
			i++
			continue
		}
		end := groupEnd(s, i)
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		g := s[i:end]
		b.WriteString("(" + collapseGroups(g[1:len(g)-1]) + ")")
		i = end
		for {
			rest := s[i:]
			trimmed := strings.TrimLeft(rest, " \n\t")
			if !strings.HasPrefix(trimmed, ",") {
				break
			}
			next := strings.TrimLeft(trimmed[1:], " \n\t")
			if !strings.HasPrefix(next, g) {
				break
			}
			i += len(rest) - len(next) + len(g)
		}
	}
	return b.String()
}

// groupEnd returns the index just past the parenthesis that closes the
// one at s[i], or -1.
func groupEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		if q := quotedEnd(s, j); q > j {
			j = q - 1
			continue
		}
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// quotedEnd returns the index just past the quoted literal or
// identifier that starts at s[i], or i when none starts there.
func quotedEnd(s string, i int) int {
	c := s[i]
	if c != '\'' && c != '"' && c != '`' {
		return i
	}
	for j := i + 1; j < len(s); j++ {
		if s[j] == c {
			if j+1 < len(s) && s[j+1] == c { // a doubled quote
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}
