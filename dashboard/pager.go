package dashboard

import (
	"net/url"

	"github.com/google/uuid"
)

// pager holds a list's keyset links: to its first page (when not on it) and
// to the page after this one (when this one was full).
type pager struct {
	FirstHref, NextHref   string
	FirstLabel, NextLabel string
}

// keyset builds the pager of a list at base+path filtered by v, whose
// cursor parameter is cursor: current is the cursor of this page, next that
// of the page after (uuid.Nil when this page was the last). Lists newest
// first say "older →"; others "next →".
func keyset(base, path string, v url.Values, cursor string, current, next uuid.UUID, newestFirst bool) pager {
	c, n := "", ""
	if current != uuid.Nil {
		c = current.String()
	}
	if next != uuid.Nil {
		n = next.String()
	}
	return keysetText(base, path, v, cursor, c, n, newestFirst)
}

// keysetText is keyset with a text cursor ("" for none).
func keysetText(base, path string, v url.Values, cursor, current, next string, newestFirst bool) pager {
	p := pager{FirstLabel: "← first", NextLabel: "next →"}
	if newestFirst {
		p.FirstLabel, p.NextLabel = "← newest", "older →"
	}
	link := func(c string) string {
		w := url.Values{}
		for k, vs := range v {
			if len(vs) > 0 && vs[0] != "" && k != cursor {
				w.Set(k, vs[0])
			}
		}
		if c != "" {
			w.Set(cursor, c)
		}
		if len(w) == 0 {
			return base + path
		}
		return base + path + "?" + w.Encode()
	}
	if current != "" {
		p.FirstHref = link("")
	}
	if next != "" {
		p.NextHref = link(next)
	}
	return p
}
