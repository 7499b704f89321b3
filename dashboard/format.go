package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/seal"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"ago":       ago,
	"age":       age,
	"stamp":     stamp,
	"count":     count,
	"pretty":    pretty,
	"short":     short,
	"isNil":     func(id uuid.UUID) bool { return id == uuid.Nil },
	"percent":   percent,
	"path":      func(base string, parts ...any) string { return base + fmt.Sprint(parts...) },
	"duration":  duration,
	"waits":     waits,
	"waited":    waited,
	"view":      func(p page, n *node) nodeView { return nodeView{P: p, N: n} },
	"limitText": core.Limit.String,
	"turn":      nextTurn,
	"timing":    timingText,
	"pathPart":  url.PathEscape,
	"graphOf":   func(now time.Time, g *graphView) graphStates { return graphStates{Now: now, Graph: g} },
}

// ago says how long before now t was ("3m 20s ago"), both on the database
// clock; "—" for a zero time, "in 5s" for a time after now.
func ago(now, t time.Time) string {
	if t.IsZero() || now.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + duration(-d)
	}
	return duration(d) + " ago"
}

// age is the plain length of time from t to now ("3m 20s").
func age(now, t time.Time) string {
	if t.IsZero() || now.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return duration(d)
}

// duration writes d in its two largest units, leaving out a zero second
// one ("5m", "3m 20s").
func duration(d time.Duration) string {
	two := func(a int, au string, b int, bu string) string {
		if b == 0 {
			return strconv.Itoa(a) + au
		}
		return strconv.Itoa(a) + au + " " + strconv.Itoa(b) + bu
	}
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return two(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	case d < 48*time.Hour:
		return two(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	}
	return two(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h")
}

// waited is how long the oldest available item has waited at now, or, when
// it is not due yet (delayed, or a step waiting for a signal), when it will
// be: "due in 2h".
func waited(now, t time.Time) string {
	if t.After(now) && !now.IsZero() {
		return "due in " + duration(t.Sub(now))
	}
	return age(now, t)
}

// stamp is a time in full, UTC, for a title attribute.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// count writes n with thousands separators, and a "+" when capped says the
// count stopped at n: "10,000+".
func count(n int64, capped bool) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	out := string(b)
	if neg {
		out = "-" + out
	}
	if capped {
		out += "+"
	}
	return out
}

// maxShown bounds the JSON shown of one payload or result.
const maxShown = 64 << 10

// pretty indents a JSON document for reading, cut at maxShown bytes.
// A sealed value (package seal) shows as "sealed (key id K)" in place of
// its bytes, and so does each sealed value inside a document (a
// pipeline's step input in its item's payload): the dashboard holds no
// key, and ciphertext tells a reader nothing.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if id, ok := seal.Inspect(raw); ok {
		return sealedLabel(id)
	}
	raw = sealedInside(raw)
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > maxShown {
		return string(bytes.ToValidUTF8(b.Bytes()[:maxShown], nil)) + "\n… (cut: " + count(int64(b.Len()), false) + " bytes in all)"
	}
	return b.String()
}

// short is the first block of a UUID, for dense tables (the full id is in
// the link and the title).
func short(id uuid.UUID) string {
	if id == uuid.Nil {
		return "—"
	}
	return id.String()[:8]
}

// percent is part of whole in [0, 100].
func percent(part, whole int64) int64 {
	if whole <= 0 {
		return 0
	}
	p := part * 100 / whole
	return min(max(p, 0), 100)
}

// nodeView is a run tree's node with the page it is drawn on, for the
// recursive node template.
type nodeView struct {
	P page
	N *node
}

// waits reports whether the item still waits for its signal at now: it
// waits on a name and is not claimable yet (a signal, or the deadline,
// moves its available time to now, and the name stays until the step
// claims it and takes the signal).
func waits(now time.Time, it core.Item) bool {
	return it.Waiting() && it.AvailableAt.After(now)
}

// sealedLabel is what the dashboard shows of a value sealed with key id.
func sealedLabel(id string) string { return "sealed (key id " + id + ")" }

// sealedInside returns raw with every sealed value inside it replaced by
// its label, as a JSON string; raw itself when it holds none (the
// common case, found without decoding) or does not decode. The members
// of a rewritten object come out in key order.
func sealedInside(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"plenum.sealed"`)) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["plenum.sealed"]; ok {
				b, _ := json.Marshal(x)
				if id, ok := seal.Inspect(b); ok {
					return sealedLabel(id)
				}
			}
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // html/template escapes what the page shows
	if enc.Encode(walk(v)) != nil {
		return raw
	}
	return bytes.TrimSpace(b.Bytes())
}
