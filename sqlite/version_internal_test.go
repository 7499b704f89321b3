package sqlite

import "testing"

func TestAtLeast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    string
		want bool
	}{
		{"3.35.0", true}, {"3.35", true}, {"3.35.5", true}, {"3.40.1", true}, {"3.54.1", true}, {"4.0.0", true},
		{"3.34.1", false}, {"3.9.2", false}, {"2.99.99", false}, {"", false}, {"x.y", false},
	} {
		if got := atLeast(c.v, MinVersion); got != c.want {
			t.Errorf("atLeast(%q, %q) = %v, want %v", c.v, MinVersion, got, c.want)
		}
	}
}
