package cmdline

import "strconv"

// Commas formats n with thousands separators: 10000 -> "10,000".
func Commas[T ~int | ~int64 | ~uint64](n T) string {
	neg := n < 0
	var s string
	if neg {
		s = strconv.FormatUint(-uint64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Plural returns n and word, with an s unless n is 1: "2 workers".
func Plural[T ~int | ~int64](n T, word string) string {
	if n == 1 {
		return Commas(n) + " " + word
	}
	return Commas(n) + " " + word + "s"
}
