package main

import (
	"bytes"
	"strings"
	"testing"
)

// A stream as "go test -json" writes it: postgres found its database,
// mysql skipped in two tests, a third package failed.
const stream = `{"Action":"start","Package":"p/pg"}
{"Action":"run","Package":"p/pg","Test":"TestConformance"}
{"Action":"output","Package":"p/pg","Test":"TestConformance","Output":"=== RUN   TestConformance\n"}
{"Action":"output","Package":"p/pg","Test":"TestConformance","Output":"    harness.go:83: conformance: postgres: testing the database of PLENUM_POSTGRES_DSN\n"}
{"Action":"pass","Package":"p/pg","Test":"TestConformance"}
{"Action":"output","Package":"p/pg","Output":"PASS\n"}
{"Action":"output","Package":"p/pg","Output":"ok  \tp/pg\t0.1s\n"}
{"Action":"pass","Package":"p/pg"}
{"Action":"run","Package":"p/my","Test":"TestA"}
{"Action":"output","Package":"p/my","Test":"TestA","Output":"    harness.go:99: conformance: no mysql database: set PLENUM_MYSQL_DSN to a DSN; PLENUM_REQUIRE=mysql turns this skip into a failure\n"}
{"Action":"skip","Package":"p/my","Test":"TestA"}
{"Action":"run","Package":"p/my","Test":"TestB/sub"}
{"Action":"output","Package":"p/my","Test":"TestB/sub","Output":"    harness.go:99: conformance: no mysql database: set PLENUM_MYSQL_DSN to a DSN; PLENUM_REQUIRE=mysql turns this skip into a failure\n"}
{"Action":"skip","Package":"p/my","Test":"TestB/sub"}
{"Action":"output","Package":"p/my","Output":"ok  \tp/my\t0.2s\n"}
{"Action":"pass","Package":"p/my"}
{"Action":"run","Package":"p/bad","Test":"TestX"}
{"Action":"output","Package":"p/bad","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"output","Package":"p/bad","Test":"TestX","Output":"    x_test.go:9: it broke\n"}
{"Action":"output","Package":"p/bad","Test":"TestX","Output":"--- FAIL: TestX (0.00s)\n"}
{"Action":"fail","Package":"p/bad","Test":"TestX"}
{"Action":"output","Package":"p/bad","Output":"FAIL\n"}
{"Action":"output","Package":"p/bad","Output":"FAIL\tp/bad\t0.3s\n"}
{"Action":"fail","Package":"p/bad"}
{"Action":"output","Package":"p/none","Output":"?   \tp/none\t[no test files]\n"}
{"Action":"skip","Package":"p/none"}
`

func TestReport_PrintsWhatGoTestWouldAndWhichSuitesRan(t *testing.T) {
	t.Parallel()
	got := reportOf(stream, false)
	checkContains(t, got,
		"ok  \tp/pg\t0.1s\n",
		"ok  \tp/my\t0.2s\n",
		"    x_test.go:9: it broke\n--- FAIL: TestX (0.00s)\nFAIL\nFAIL\tp/bad\t0.3s\n",
		"?   \tp/none\t[no test files]\n",
		"  mysql     SKIPPED         2 tests SKIPPED\n",
		"  postgres  ran             1 test ran on the database of PLENUM_POSTGRES_DSN\n",
		"Not tested, what each would add, and how to test it:\n  mysql: set PLENUM_MYSQL_DSN to a DSN; PLENUM_REQUIRE=mysql turns this skip into a failure\n",
	)
	for _, unwanted := range []string{"=== RUN", "PASS\n", "testing the database of PLENUM_POSTGRES_DSN\n    "} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q, which go test would not print:\n%s", unwanted, got)
		}
	}
	if strings.Contains(got, "postgres: set") {
		t.Errorf("postgres ran, yet the summary says how to enable it:\n%s", got)
	}
}

// The mysql suite ran on a MariaDB through PLENUM_MYSQL_DSN while the
// mariadb one, which wants a server of its own, skipped: the summary names
// the server each suite ran on, and says what the skipped one would add.
const onMariaDB = `{"Action":"run","Package":"p/my","Test":"TestConformance"}
{"Action":"output","Package":"p/my","Test":"TestConformance","Output":"    harness.go:83: conformance: mysql: testing the database of PLENUM_MYSQL_DSN\n"}
{"Action":"output","Package":"p/my","Test":"TestConformance","Output":"    server.go:35: conformance: server: MariaDB 10.11.19-MariaDB\n"}
{"Action":"pass","Package":"p/my","Test":"TestConformance"}
{"Action":"run","Package":"p/my","Test":"TestConformance_MariaDB"}
{"Action":"output","Package":"p/my","Test":"TestConformance_MariaDB","Output":"    harness.go:95: conformance: mariadb: would add the suite on a MariaDB server of its own\n"}
{"Action":"output","Package":"p/my","Test":"TestConformance_MariaDB","Output":"    harness.go:99: conformance: no mariadb database: set PLENUM_MARIADB_DSN to a DSN\n"}
{"Action":"skip","Package":"p/my","Test":"TestConformance_MariaDB"}
{"Action":"output","Package":"p/my","Output":"ok  \tp/my\t0.2s\n"}
{"Action":"pass","Package":"p/my"}
`

func TestReport_NamesEachSuitesServerAndWhatSkippedOnesAdd(t *testing.T) {
	t.Parallel()
	got := reportOf(onMariaDB, false)
	checkContains(t, got,
		"  mysql    ran             1 test ran on the database of PLENUM_MYSQL_DSN: MariaDB 10.11.19-MariaDB\n",
		"  mariadb  SKIPPED         1 test SKIPPED\n",
		"Not tested, what each would add, and how to test it:\n"+
			"  mariadb: would add the suite on a MariaDB server of its own\n"+
			"    set PLENUM_MARIADB_DSN to a DSN\n",
	)
	if strings.Contains(got, "mariadb  SKIPPED         1 test SKIPPED: MariaDB") {
		t.Errorf("the server of the mysql suite given to the skipped mariadb one:\n%s", got)
	}
}

// Without any database suite in the run there is no summary.
func TestReport_NoSuitesNoSummary(t *testing.T) {
	t.Parallel()
	out := reportOf(`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`+"\n"+`{"Action":"pass","Package":"p"}`+"\n", false)
	if out != "ok  \tp\t0.1s\n" {
		t.Errorf("output %q", out)
	}
}

// With -v every line is printed, as go test -v prints it, and the summary
// follows.
func TestReport_VerbosePrintsEverything(t *testing.T) {
	t.Parallel()
	if !verbose([]string{"-race", "-v", "./..."}) || verbose([]string{"-run", "V"}) || verbose([]string{"--", "-v"}) {
		t.Error("verbose() misreads its arguments")
	}
	out := reportOf(stream, true)
	checkContains(t, out, "=== RUN   TestConformance\n", "testing the database of PLENUM_POSTGRES_DSN\n", "PASS\n", "ok  \tp/pg\t0.1s\n", "Not tested, what each would add, and how to test it:")
	if n := strings.Count(out, "    x_test.go:9: it broke\n"); n != 1 {
		t.Errorf("a failed test's line printed %d times, want once:\n%s", n, out)
	}
}

// A package that runs past -timeout, as "go test -json" reports it: the
// panic belongs to the test still running, which never ends.
const timedOut = `{"Action":"start","Package":"p/slow"}
{"Action":"run","Package":"p/slow","Test":"TestQuick"}
{"Action":"output","Package":"p/slow","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Action":"output","Package":"p/slow","Test":"TestQuick","Output":"--- PASS: TestQuick (0.00s)\n"}
{"Action":"pass","Package":"p/slow","Test":"TestQuick"}
{"Action":"run","Package":"p/slow","Test":"TestHang"}
{"Action":"output","Package":"p/slow","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"run","Package":"p/slow","Test":"TestHang/sub"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"=== RUN   TestHang/sub\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"panic: test timed out after 2s\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"\trunning tests:\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"\t\tTestHang (2s)\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"\t\tTestHang/sub (2s)\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"goroutine 7 [sleep]:\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"p/slow.TestHang.func1(0xc000102000)\n"}
{"Action":"output","Package":"p/slow","Test":"TestHang/sub","Output":"\t\t/src/p/slow/a_test.go:4 +0x25\n"}
{"Action":"output","Package":"p/slow","Output":"FAIL\tp/slow\t2.043s\n"}
{"Action":"fail","Package":"p/slow"}
`

// A timed-out package prints its panic and stacks, and the run ends with
// which tests were running.
func TestReport_TimeoutPrintsTheStacksAndTheRunningTests(t *testing.T) {
	t.Parallel()
	got := reportOf(stream+timedOut, false)
	checkContains(t, got,
		"panic: test timed out after 2s\n",
		"p/slow.TestHang.func1(0xc000102000)\n",
		"FAIL\tp/slow\t2.043s\n",
	)
	const digest = "\nTimed out, with the tests that were still running (their stacks are above):\n" +
		"  p/slow: panic: test timed out after 2s\n    TestHang (2s)\n    TestHang/sub (2s)\n"
	if !strings.HasSuffix(got, digest) {
		t.Errorf("output does not end with %q:\n%s", digest, got)
	}
	if strings.Contains(got, "TestQuick") {
		t.Errorf("output names a test that passed:\n%s", got)
	}
}

// The digest comes even where no database suite ran.
func TestReport_TimeoutWithoutSuites(t *testing.T) {
	t.Parallel()
	out := reportOf(timedOut, false)
	if !strings.Contains(out, "  p/slow: panic: test timed out after 2s\n") {
		t.Errorf("no digest:\n%s", out)
	}
}

// checkContains fails t for each of wants that got does not contain.
func checkContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// reportOf is what the report prints for stream, summary included.
func reportOf(stream string, verbose bool) string {
	var out bytes.Buffer
	r := newReport(&out)
	r.verbose = verbose
	r.read(strings.NewReader(stream))
	r.summary()
	return out.String()
}
