package core

import (
	"context"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/migrations"
)

// RunFilter chooses the runs Runs lists. Zero fields match any run.
type RunFilter struct {
	// Name, when set, lists only runs of that name (a pipeline's name):
	// up to 128 characters.
	Name string
	// State, when set, is one of the five run states.
	State RunState
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
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if err := lookupName("Name", f.Name, migrations.MaxRunNameLen, false); err != nil {
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
	args := s.pageArgs(runShape(bits, f.State), eq, f.Before)
	return readRows(ctx, s, "runs", s.sql(qRunsPage(s.d, bits, f.State, limit)), func(r scanner) (Run, error) { return scanRun(s.d, r) }, args...)
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
func (s *Store) RunBarriers(ctx context.Context, p RunBarriersParams) ([]Barrier, error) {
	limit, err := listLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	if p.Run == uuid.Nil {
		return nil, invalid("Run", "must be a run's id")
	}
	return readRows(ctx, s, "run barriers", s.sql(qRunBarriers(s.d, limit)), func(r scanner) (Barrier, error) { return scanBarrier(s.d, r) }, s.d.UUID(p.Run), s.d.UUID(p.After))
}
