package storeworkload

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadBrowse reaches, after workloadRuns on the same tables, every
// statement of the dashboard's reads: each filter combination of Items and
// Runs (and of Items by a tag or metadata, alone and with a queue),
// a run's barriers, the owners, and queue summaries (of all queues
// and of one, with a queue of more priorities than the oldest item's
// probes).
func workloadBrowse(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	b := browse.New(s)
	var specs []core.ItemSpec
	for p := range 20 {
		specs = append(specs, core.ItemSpec{Queue: "browse-prio", Kind: "k", Priority: p})
	}
	_, err := s.Enqueue(ctx, specs...)
	must(err)
	run, _, err := s.CreateRun(ctx, core.RunSpec{Name: "browse"}, core.ItemSpec{Queue: "browse-run"})
	must(err)
	for _, queue := range []string{"", "browse-prio"} {
		for _, state := range []core.State{"", core.StateAvailable} {
			for _, kind := range []string{"", "k"} {
				for _, r := range []uuid.UUID{uuid.Nil, run.ID} {
					_, err := b.Items(ctx, browse.ItemFilter{Queue: queue, State: state, Kind: kind, Run: r, Limit: 2})
					must(err)
				}
			}
		}
	}
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "browse-meta", Tags: []string{"t"}, Metadata: map[string]string{"k": "v"}})
	must(err)
	for _, f := range []browse.ItemFilter{{Tag: "t"}, {MetaKey: "k"}, {MetaKey: "k", MetaValue: "v"}} {
		for _, queue := range []string{"", "browse-meta"} {
			f.Queue, f.Limit = queue, 2
			_, err := b.Items(ctx, f)
			must(err)
		}
	}
	for _, name := range []string{"", "browse"} {
		for _, state := range []core.RunState{"", core.RunRunning} {
			_, err := b.Runs(ctx, browse.RunFilter{Name: name, State: state})
			must(err)
		}
	}
	_, err = b.RunBarriers(ctx, browse.RunBarriersParams{Run: run.ID})
	must(err)
	_, err = b.Owners(ctx, browse.OwnersParams{})
	must(err)
	_, err = b.QueueSummaries(ctx, browse.QueueSummaryParams{Window: time.Hour})
	must(err)
	_, err = b.QueueSummaries(ctx, browse.QueueSummaryParams{Queue: "browse-prio", CountCap: 5})
	must(err)
	workloadBrowseLanes(t, s, b)
}

// workloadBrowseLanes reaches the reads of a queue's lanes: the first page
// and the next, one lane by its key, with and without the queue's default
// limit.
func workloadBrowseLanes(t *testing.T, s *core.Store, b *browse.Reader) {
	ctx := context.Background()
	must := fatal(t)
	_, err := s.Enqueue(ctx, core.ItemSpec{Queue: "browse-lanes", FlowKey: "a"}, core.ItemSpec{Queue: "browse-lanes", FlowKey: "b"})
	must(err)
	must(s.SetLimit(ctx, core.Limit{Queue: "browse-lanes", Key: "b", Concurrency: 1}))
	page, err := b.Lanes(ctx, browse.LanesParams{Queue: "browse-lanes", Limit: 1})
	must(err)
	_, err = b.Lanes(ctx, browse.LanesParams{Queue: "browse-lanes", After: page.Next, CountCap: 5})
	must(err)
	must(s.SetLimit(ctx, core.Limit{Queue: "browse-lanes", Concurrency: 2}))
	_, err = b.Lanes(ctx, browse.LanesParams{Queue: "browse-lanes", Key: "a"})
	must(err)
}
