package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// HaltParams describe a halt asked for by a fenced item.
type HaltParams struct {
	// Reason is required: 1 to 64 characters (max_fanout_exceeded, no_route,
	// ...), under ItemSpec.Queue's rules for names.
	Reason string
	// Detail is free text stored with the halt, up to MaxErrorBytes.
	Detail string
	// Error is the text of the item's failed attempt, recorded in its
	// history; default Reason.
	Error string
}

// HaltResult is the outcome of Fenced.Halt.
type HaltResult struct {
	// HaltID identifies the halt (uuid.Nil when the run was not running
	// or waiting, and so did not halt).
	HaltID uuid.UUID
}

// Halt fails the fenced item dead (its attempt recorded with p.Error,
// counted as a failure at its barrier) and halts its run with p.Reason, in
// the fence's transaction, enqueuing the run's HaltItem there too. Reviving
// the run (ReviveRun) runs the item again. The item must belong to a run.
//
// Independently of Halt, an item of a run that dies (its attempts used up
// by Fail or by expired leases, failed with Discard, or dead after too
// many crashes) halts its run in the transaction where it dies, with
// HaltAttemptsExhausted or HaltCrashesExhausted.
func (f *Fenced) Halt(ctx context.Context, p HaltParams) (HaltResult, error) {
	s := f.s
	if err := f.usable("Halt"); err != nil {
		return HaltResult{}, err
	}
	if f.completed {
		return HaltResult{}, invalid("Halt", "the fenced item was already completed in this fence")
	}
	if err := validName("Reason", p.Reason, migrations.MaxHaltReasonLen, true); err != nil {
		return HaltResult{}, err
	}
	if err := validText("Detail", p.Detail, MaxErrorBytes); err != nil {
		return HaltResult{}, err
	}
	run, err := f.runID(ctx)
	if err != nil {
		return HaltResult{}, err
	}
	if run == uuid.Nil {
		return HaltResult{}, invalid("Halt", "item %s belongs to no run", f.c.ID)
	}
	if p.Error == "" {
		p.Error = p.Reason
	}
	_, id, err := s.failHalting(ctx, f.tx, f.c, FailParams{Error: p.Error, Discard: true}, p.Reason, p.Detail)
	if errors.Is(err, ErrClaimLost) {
		f.lost = true
		return HaltResult{}, fmt.Errorf("plenum: halt %s: %w", f.c.ID, ErrClaimLost)
	}
	if err != nil {
		return HaltResult{}, err
	}
	f.completed = true
	return HaltResult{HaltID: id}, nil
}

// haltRunsOf halts the runs of those of ids (items that just died in q)
// that belong to a running or waiting run, blaming each run's first item.
// Runs are locked after the items and barriers, in id order.
func (s *Store) haltRunsOf(ctx context.Context, q dialect.Querier, ids []uuid.UUID, reason, detail string) (map[uuid.UUID]uuid.UUID, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	type blame struct{ run, item uuid.UUID }
	var found []blame
	seen := map[uuid.UUID]bool{}
	for _, chunk := range chunks(ids, s.releaseMax()) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = s.d.UUID(id)
		}
		rows, err := q.QueryContext(ctx, s.sql(qRunOfItems(len(chunk))), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var b blame
			if err := rows.Scan(&b.run, &b.item); err != nil {
				rows.Close()
				return nil, err
			}
			if !seen[b.run] {
				seen[b.run] = true
				found = append(found, b)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(found, func(a, b blame) int { return bytes.Compare(a.run[:], b.run[:]) })
	halts := map[uuid.UUID]uuid.UUID{}
	for _, b := range found {
		lr, err := s.lockRun(ctx, q, b.run)
		if err != nil {
			return nil, err
		}
		if lr.state != RunRunning && lr.state != RunWaiting {
			continue
		}
		id, err := s.halt(ctx, q, lr, reason, detail, b.item)
		if err != nil {
			return nil, err
		}
		halts[b.run] = id
	}
	return halts, nil
}
