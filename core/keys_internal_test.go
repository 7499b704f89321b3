package core

import "testing"

func TestReservedKey(t *testing.T) {
	t.Parallel()
	const id = "01a230d0-02d5-726e-abd3-80b62a074ef3"
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{id + "/c2", true},
		{id + "/", true},
		{"01A230D0-02D5-726E-ABD3-80B62A074EF3/x", true},
		{id + "/a/b", true},
		{id, false},
		{id + "-c2", false},
		{id[:35] + "/c2", false},
		{"01a230d002d5726eabd380b62a074ef3/c2", false},     // no hyphens: not the stored form
		{"{01a230d0-02d5-726e-abd3-80b62a074ef}/x", false}, // braces
		{"x" + id + "/c2", false},
		{"order/" + id, false},
		{"", false},
	} {
		if got := reservedKey(tc.key); got != tc.want {
			t.Errorf("reservedKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
