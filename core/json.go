package core

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The bounds of PostgreSQL's numeric, which jsonb stores every number as:
// a number may have its first significant digit at most maxNumberLead
// places before the decimal point and at most maxNumberScale digits after
// it (trailing zeros included, as numeric keeps them), and its exponent
// must stay below maxNumberExp either way. Checked on PostgreSQL 15:
// 1e131071 and 1e-16383 are stored, 1e131072, 1e-16384 and 1.50e-16382
// are refused with 22003.
const (
	maxNumberLead  = 131071
	maxNumberScale = 16383
	maxNumberExp   = 1<<30 - 1 // INT_MAX/2, checked before anything else
)

// validJSON refuses, naming field, a document that one of the databases
// would refuse: over the size limit, not JSON, not UTF-8, or holding what
// PostgreSQL's jsonb cannot store (see checkJSON). Every database refuses
// the same documents, so a payload means the same everywhere.
func (s *Store) validJSON(field string, b json.RawMessage) error {
	if b == nil {
		return nil
	}
	if len(b) > s.opts.MaxPayloadBytes {
		return invalid(field, "%d bytes is over the limit of %d (Options.MaxPayloadBytes)", len(b), s.opts.MaxPayloadBytes)
	}
	return checkDoc(field, b)
}

// checkDoc refuses, naming field, a document of any size that one of the
// databases would refuse (validJSON less its size limit); nil passes.
func checkDoc(field string, b json.RawMessage) error {
	if b == nil {
		return nil
	}
	if !json.Valid(b) {
		return invalid(field, "is not valid JSON")
	}
	// json.Valid lets invalid UTF-8 inside strings through; databases with
	// a checked character set refuse it.
	if !utf8.Valid(b) {
		return invalid(field, "is not valid UTF-8")
	}
	switch problem, at := checkJSON(b); problem {
	case jsonNUL:
		return invalid(field, `holds the NUL character (\u0000) at byte %d, which PostgreSQL's jsonb cannot store; it is refused on every database so that a payload means the same everywhere`, at)
	case jsonSurrogate:
		return invalid(field, `holds a lone or reversed surrogate escape at byte %d (\ud800 to \udfff must come as a high-low pair), which is no character: PostgreSQL's jsonb refuses it, and so does every database here`, at)
	case jsonNumber:
		return invalid(field, "holds a number at byte %d outside the range PostgreSQL's jsonb stores (first digit at most %d places before the decimal point, at most %d digits after it): refused on every database", at, maxNumberLead+1, maxNumberScale)
	}
	return nil
}

// What checkJSON finds.
const (
	jsonOK = iota
	jsonNUL
	jsonSurrogate
	jsonNumber
)

// checkJSON scans a document that json.Valid accepted, once, without
// allocating, for what PostgreSQL's jsonb refuses although the JSON is
// valid: the escape \u0000, a surrogate escape that is not a high one
// followed by a low one, and a number outside numeric's range. It returns
// the first problem and its byte offset.
func checkJSON(b []byte) (problem, at int) {
	// quote and slash are the next '"' and '\\' at or after i (len(b)
	// when there is none), found with bytes.IndexByte and kept until i
	// passes them, so that each byte is searched once.
	quote, slash := -1, -1
	next := func(c byte, from int) int {
		if j := bytes.IndexByte(b[from:], c); j >= 0 {
			return from + j
		}
		return len(b)
	}
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			i++
			for {
				if quote < i {
					quote = next('"', i)
				}
				if slash < i {
					slash = next('\\', i)
				}
				if quote < slash {
					i = quote + 1 // the string ends with no escape left
					break
				}
				i = slash
				if b[i+1] != 'u' {
					i += 2
					continue
				}
				r := hex4(b[i+2 : i+6])
				switch {
				case r == 0:
					return jsonNUL, i
				case r >= 0xd800 && r < 0xdc00:
					if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						if lo := hex4(b[i+8 : i+12]); lo >= 0xdc00 && lo < 0xe000 {
							i += 12
							continue
						}
					}
					return jsonSurrogate, i
				case r >= 0xdc00 && r < 0xe000:
					return jsonSurrogate, i
				}
				i += 6
			}
		case c == '-' || (c >= '0' && c <= '9'):
			end, ok := checkNumber(b, i)
			if !ok {
				return jsonNumber, i
			}
			i = end
		default:
			i++
		}
	}
	return jsonOK, 0
}

// checkNumber reads the valid JSON number at b[i:] and reports where it
// ends and whether PostgreSQL's numeric holds it.
func checkNumber(b []byte, i int) (end int, ok bool) {
	if b[i] == '-' {
		i++
	}
	lead, nonzero := 0, false // place of the first significant digit
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if digits := i - start; b[start] != '0' { // JSON has no leading zeros
		lead, nonzero = digits-1, true
	}
	scale := 0
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			scale++
			if !nonzero && b[i] != '0' {
				lead, nonzero = -scale, true
			}
			i++
		}
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		neg := false
		if b[i] == '+' || b[i] == '-' {
			neg = b[i] == '-'
			i++
		}
		for i < len(b) && isDigit(b[i]) {
			if exp <= maxNumberExp { // saturate: past the bound is refused anyway
				exp = exp*10 + int(b[i]-'0')
			}
			i++
		}
		if exp >= maxNumberExp {
			return i, false
		}
		if neg {
			exp = -exp
		}
	}
	if max(scale-exp, 0) > maxNumberScale {
		return i, false
	}
	if nonzero && lead+exp > maxNumberLead {
		return i, false
	}
	return i, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hex4 decodes four hex digits that json.Valid already checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
