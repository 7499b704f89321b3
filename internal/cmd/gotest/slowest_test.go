package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestSummary_ListsTheLongestTopLevelTests(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= slowestShown+3; i++ {
		fmt.Fprintf(&b, `{"Action":"run","Package":"p/a","Test":"Test%02d"}`+"\n", i)
		fmt.Fprintf(&b, `{"Action":"pass","Package":"p/a","Test":"Test%02d","Elapsed":%d}`+"\n", i, i)
	}
	// A subtest longer than every test: its time is its parent's.
	b.WriteString(`{"Action":"pass","Package":"p/a","Test":"Test01/sub","Elapsed":500}` + "\n")
	b.WriteString(`{"Action":"pass","Package":"p/a","Elapsed":600}` + "\n")
	got := reportOf(b.String(), false)
	checkContains(t, got,
		fmt.Sprintf("The %d longest tests (wall time, waits included):\n", slowestShown),
		fmt.Sprintf("     %d.0s  p/a Test%02d\n", slowestShown+3, slowestShown+3),
		"      4.0s  p/a Test04\n",
	)
	for _, unwanted := range []string{"Test03\n", "Test01/sub", "500.0s", "600.0s"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the list has %q:\n%s", unwanted, got)
		}
	}
	if i, j := strings.Index(got, "Test15"), strings.Index(got, "Test14"); i < 0 || j < 0 || i > j {
		t.Errorf("the list is not longest first:\n%s", got)
	}
}

func TestSummary_NoListOfTestsUnderASecond(t *testing.T) {
	t.Parallel()
	in := `{"Action":"pass","Package":"p/a","Test":"TestQuick","Elapsed":0.9}` + "\n" + `{"Action":"pass","Package":"p/a","Elapsed":1}` + "\n"
	if got := reportOf(in, false); strings.Contains(got, "longest") {
		t.Errorf("a run whose tests each took under a second lists the longest:\n%s", got)
	}
}
