package cmdline

import "testing"

func TestCommas(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Commas(uint64(1) << 63); got != "9,223,372,036,854,775,808" {
		t.Errorf("Commas(2^63) = %q", got)
	}
}
