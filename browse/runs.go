package browse

import (
	"context"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// RunFilter chooses the runs Runs lists. Zero fields match any run.
type RunFilter struct {
	// Name, when set, lists only runs of that name (a pipeline's name):
	// up to 128 characters.
	Name string
	// State, when set, is one of the five run states.
	State core.RunState
	// Before is the id of the last run of the previous page; uuid.Nil for
	// the first page.
	Before uuid.UUID
	// Limit is the page size: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
}

// Runs lists pipeline runs matching f, newest first (ids are UUIDv7), one
// keyset page at a time: pass the last id of a page as the next page's
// Before. Each filter combination is read in id order from an index, as
// Items' are.
func (r *Reader) Runs(ctx context.Context, f RunFilter) ([]core.Run, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if err := r.s.LookupName("Name", f.Name, migrations.MaxRunNameLen); err != nil {
		return nil, err
	}
	if err := validRunState("State", f.State); err != nil {
		return nil, err
	}
	bits := 0
	var eq []any
	if f.Name != "" {
		bits |= 1
		eq = append(eq, f.Name)
	}
	if f.State != "" {
		bits |= 2
	}
	args := r.pageArgs(runShape(bits, f.State), eq, f.Before)
	return storesql.Rows(ctx, r.s.Handle, "runs", r.s.SQL(qRunsPage(r.s, bits, f.State, limit)), r.s.ScanRun, args...)
}

// RunBarriersParams page through the barriers of a run.
type RunBarriersParams struct {
	// Run is required.
	Run uuid.UUID
	// After is the id of the last barrier of the previous page; uuid.Nil
	// for the first page.
	After uuid.UUID
	// Limit is the page size: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
}

// RunBarriers lists the barriers of a run (those whose Barrier.Run is it),
// in id order (creation order), one keyset page at a time: with each
// barrier's owner (the step that fanned out), its join and its
// arrived/expected counts, a page can draw the run's tree of steps and
// barriers.
func (r *Reader) RunBarriers(ctx context.Context, p RunBarriersParams) ([]core.Barrier, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	if p.Run == uuid.Nil {
		return nil, invalid("Run", "must be a run's id")
	}
	return storesql.Rows(ctx, r.s.Handle, "run barriers", r.s.SQL(qRunBarriers(r.s, limit)), r.s.ScanBarrier, r.s.Dialect.UUID(p.Run), r.s.Dialect.UUID(p.After))
}
