package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testDSN returns the PostgreSQL the test runs on, skipping without one
// (failing when PLENUM_REQUIRE names postgres, as the root module's suites
// do).
func testDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("PLENUM_POSTGRES_DSN")
	if dsn == "" {
		if strings.Contains(","+os.Getenv("PLENUM_REQUIRE")+",", ",postgres,") {
			t.Fatal("PLENUM_REQUIRE names postgres but PLENUM_POSTGRES_DSN is not set")
		}
		t.Skip("no PostgreSQL: set PLENUM_POSTGRES_DSN=postgres://user@host:5432/db?sslmode=disable")
	}
	return dsn
}

// A tiny run proves the benchmark works end to end: both clients drain
// every job in each round, the rounds alternate, the ratio is the last
// line, and River's schema and Plenum's tables are gone afterwards. It
// asserts no speed.
func TestRun_DrainsBothSidesAndPrintsTheRatio(t *testing.T) {
	dsn := testDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, []string{"--dsn", dsn, "--items", "300", "--rounds", "3", "--concurrency", "50"}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{"FetchCooldown 2ms", "FetchPollInterval 20ms", "MaxWorkers 50", "synchronous_commit="} {
		if !strings.Contains(text, want) {
			t.Errorf("the output does not print %q", want)
		}
	}
	rounds := regexp.MustCompile(`(?m)^round (\d) +(river|plenum) `).FindAllStringSubmatch(text, -1)
	var order []string
	for _, r := range rounds {
		order = append(order, r[2])
	}
	if got, want := strings.Join(order, ","), "river,plenum,river,plenum,river,plenum"; got != want {
		t.Errorf("rounds ran %s, want %s", got, want)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^plenum/river = \d+\.\d\d$`).MatchString(last) {
		t.Errorf("last line %q, want plenum/river = X.XX", last)
	}

	tag := regexp.MustCompile(`schema river_bench_([0-9a-f]+);`).FindStringSubmatch(text)
	if tag == nil {
		t.Fatal("the output names no River schema")
	}
	b, err := open(ctx, options{DSN: dsn, Items: 1, Rounds: 1, Concurrency: 1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.close(ctx); err != nil {
			t.Error(err)
		}
	}()
	var left int
	err = b.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1) +
		(SELECT count(*) FROM information_schema.tables WHERE table_name LIKE $2)`,
		"river_bench_"+tag[1], "pb\\_"+tag[1]+"\\_%").Scan(&left)
	if err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d of the run's schemas and tables are left behind", left)
	}
}

// A tiny steady state runs both producers and clients together, in
// alternating rounds, and prints each round's rate and pickup latency and
// the ratio last. It asserts no speed.
func TestRun_SteadyStateBothSides(t *testing.T) {
	dsn := testDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, []string{"--dsn", dsn, "--steady", "--warmup", "200ms", "--measure", "500ms", "--rounds", "1"}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{"FetchCooldown 2ms", "FetchPollInterval 20ms", "MaxWorkers 64", "InsertMany in batches of 128", "about 4,000 jobs available", "1 windows of 500ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output does not print %q", want)
		}
	}
	rounds := regexp.MustCompile(`(?m)^round 1 +(river|plenum) +[\d,]+ jobs/s \(median of 1 windows\)  pickup p50 \S+ p95 \S+ p99 \S+ \([\d,]+ pickups\)`).FindAllStringSubmatch(text, -1)
	if len(rounds) != 2 || rounds[0][1] != "river" || rounds[1][1] != "plenum" {
		t.Errorf("rounds %q, want river's then plenum's", rounds)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^plenum/river = \d+\.\d\d$`).MatchString(last) {
		t.Errorf("last line %q, want plenum/river = X.XX", last)
	}
}

func TestParse_RefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--dsn", "x", "--items", "0"},
		{"--dsn", "x", "--rounds", "0"},
		{"--dsn", "x", "--concurrency", "0"},
		{"--dsn", "x", "--only", "sidekiq"},
		{"--dsn", "x", "extra"},
		{"--dsn", "x", "--steady", "--measure", "0s"},
		{"--dsn", "x", "--steady", "--warmup", "-1s"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
}
