package dashboard

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits of the query parameters the pages take.
const (
	// maxText bounds a queue, kind or run name filter: the store's own
	// bound on those names.
	maxText = 128
	// maxLimit bounds a page's rows.
	maxLimit = 500
	// defaultLimit is a page's rows when none is asked for.
	defaultLimit = 50
)

// query reads and checks a request's query parameters, collecting every
// problem so that the 400 page names them all at once.
type query struct {
	v        url.Values
	known    map[string]bool
	problems []string
}

// newQuery starts checking the raw query q, which may only hold the
// parameters named in allowed.
func newQuery(raw string, allowed ...string) *query {
	q := &query{known: map[string]bool{}}
	v, err := url.ParseQuery(raw)
	if err != nil {
		q.problems = append(q.problems, "the query string is malformed: "+err.Error())
	}
	q.v = v
	for _, a := range allowed {
		q.known[a] = true
	}
	for k, vs := range v {
		if !q.known[k] {
			q.problems = append(q.problems, fmt.Sprintf("unknown parameter %q", clip(k)))
		} else if len(vs) > 1 {
			q.problems = append(q.problems, fmt.Sprintf("parameter %q given %d times", k, len(vs)))
		}
	}
	return q
}

// clip shortens text quoted back in an error.
func clip(s string) string { return clipTo(s, 40) }

// clipTo shortens s to at most n bytes, on a rune boundary, marking the cut.
func clipTo(s string, n int) string {
	if len(s) > n {
		for i := n; i > 0; i-- {
			if utf8.RuneStart(s[i]) {
				return s[:i] + "…"
			}
		}
	}
	return s
}

// text returns a name filter (a queue, kind or run name), exactly as
// given: valid UTF-8 without NUL bytes, at most maxText characters; ""
// when absent. It is the store's rule for names that select rows, not the
// stricter one for names it writes: a name stored before the store
// refused control characters (a tab, an escape sequence, a trailing
// newline) is linked to like any other, and its link must find it, so
// nothing is trimmed or refused that the store may hold.
func (q *query) text(name string) string {
	s := q.v.Get(name)
	if s == "" {
		return ""
	}
	if problem := checkFilter(s, maxText); problem != "" {
		q.problems = append(q.problems, name+": "+problem)
		return ""
	}
	return s
}

// checkFilter says what is wrong with s as a name filter of at most max
// characters.
func checkFilter(s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("longer than %d characters", max)
	case strings.IndexByte(s, 0) >= 0:
		return "holds a NUL byte"
	}
	return ""
}

// checkText says what is wrong with s as a name to write (a signal's name
// or key) of at most max characters: a filter's problems, or control
// characters, which the store refuses in the names it writes.
func checkText(s string, max int) string {
	if problem := checkFilter(s, max); problem != "" {
		return problem
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "holds control characters"
	}
	return ""
}

// id returns a UUID parameter, uuid.Nil when absent.
func (q *query) id(name string) uuid.UUID {
	s := strings.TrimSpace(q.v.Get(name))
	if s == "" {
		return uuid.Nil
	}
	id, err := parseID(s)
	if err != nil {
		q.problems = append(q.problems, fmt.Sprintf("%s: %q is not a UUID", name, clip(s)))
	}
	return id
}

// parseID accepts a UUID in its 36-character text form only.
func parseID(s string) (uuid.UUID, error) {
	if len(s) != 36 {
		return uuid.Nil, fmt.Errorf("not a UUID")
	}
	return uuid.Parse(s)
}

// limit returns the page size, defaultLimit when absent.
func (q *query) limit() int {
	s := strings.TrimSpace(q.v.Get("limit"))
	if s == "" {
		return defaultLimit
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLimit {
		q.problems = append(q.problems, fmt.Sprintf("limit: %q is not a number from 1 to %d", clip(s), maxLimit))
		return defaultLimit
	}
	return n
}

// oneOf returns a parameter that must be one of allowed (or absent: "").
func (q *query) oneOf(name string, allowed []string) string {
	s := strings.TrimSpace(q.v.Get(name))
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	q.problems = append(q.problems, fmt.Sprintf("%s: %q is not one of %s", name, clip(s), strings.Join(allowed, ", ")))
	return ""
}

// duration returns a Go duration parameter ("10m", "2h") from 0 to max.
func (q *query) duration(name string, max time.Duration) time.Duration {
	s := strings.TrimSpace(q.v.Get(name))
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > max {
		q.problems = append(q.problems, fmt.Sprintf("%s: %q is not a duration from 0 to %s (e.g. 10m, 2h)", name, clip(s), max))
		return 0
	}
	return d
}

// ok reports whether no problem was found.
func (q *query) ok() bool { return len(q.problems) == 0 }
