package core

import "testing"

func TestEscapesNUL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{}`, false},
		{`"\u0000"`, true},
		{`{"\u0000":1}`, true},
		{`["a\u0000b"]`, true},
		{`"\\u0000"`, false},       // an escaped backslash, then text
		{`"\\\u0000"`, true},       // an escaped backslash, then NUL
		{`"\\\\u0000"`, false},     // two escaped backslashes, then text
		{`"\\u0000 \u0000"`, true}, // text first, NUL later
		{`"\u00001"`, true},
		{`"\u0001"`, false},
		{`"u0000"`, false},
	} {
		if got := escapesNUL([]byte(tc.doc)); got != tc.want {
			t.Errorf("escapesNUL(%s) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}
