package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/sqlite"
)

// A tiny bench measures every row on both sides, checks the work was
// really done (it returns an error otherwise), and drops its tables.
func TestBench_TinyRunMeasuresBothSides(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bench.db")
	var out bytes.Buffer
	rep, err := runBench(t.Context(), &out, benchOptions{DB: path, Items: 150, Batch: 20, Workers: 3})
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("rows %+v, want enqueue, claim+complete and fan-in", rep.Rows)
	}
	for _, r := range rep.Rows {
		if r.Plenum <= 0 || r.Baseline <= 0 || r.Ratio() <= 0 {
			t.Errorf("row %+v has a rate of zero", r)
		}
		if !strings.Contains(out.String(), r.Name) {
			t.Errorf("output lacks row %q:\n%s", r.Name, out.String())
		}
	}

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%d tables left behind in %s", tables, path)
	}
}

func TestBench_CommandExitStatus(t *testing.T) {
	t.Parallel()
	code, out, errOut := cli(t, "bench", "--items", "40", "--batch", "7", "--workers", "2")
	if code != exitOK || !strings.Contains(out, "ratio") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// BenchmarkHotPathVsBareSQL runs the bench's three measurements, Plenum and
// the bare-SQL baseline on the same database in the same run, and reports
// Plenum's rates and its ratio to the baseline (above 1: Plenum is faster).
// Run: go test ./cmd/plenum -run '^$' -bench HotPath -benchtime 3x
func BenchmarkHotPathVsBareSQL(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.db")
	sums := map[string][2]float64{}
	var names []string
	runs := 0
	for b.Loop() {
		rep, err := runBench(b.Context(), io.Discard, benchOptions{DB: path, Items: 5000, Batch: 100, Workers: 4})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Rows {
			if _, ok := sums[r.Name]; !ok {
				names = append(names, r.Name)
			}
			s := sums[r.Name]
			sums[r.Name] = [2]float64{s[0] + r.Plenum, s[1] + r.Baseline}
		}
		runs++
	}
	for _, name := range names {
		s := sums[name]
		unit := strings.ReplaceAll(name, " ", "-")
		b.ReportMetric(s[0]/float64(runs), unit+"/s")
		b.ReportMetric(s[0]/s[1], unit+"-ratio")
	}
}
