package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// FinishOutcome says how Store.FinishMany ends one claim.
type FinishOutcome int

// The outcomes of a Finish.
const (
	// FinishComplete completes the item with Finish.Result, as Complete
	// does. It is the zero value.
	FinishComplete FinishOutcome = iota
	// FinishFail records a failed attempt with Finish.Fail, as Fail does:
	// the item runs again after a backoff, or is dead.
	FinishFail
	// FinishRelease gives the item back without using an attempt,
	// available again after Finish.Delay, as Release does.
	FinishRelease
)

// String names the outcome.
func (o FinishOutcome) String() string {
	switch o {
	case FinishComplete:
		return "complete"
	case FinishFail:
		return "fail"
	case FinishRelease:
		return "release"
	}
	return fmt.Sprintf("FinishOutcome(%d)", int(o))
}

// Finish is one claim for Store.FinishMany to end, and how.
type Finish struct {
	// Claim is the claim that ends. Required.
	Claim Claim
	// Outcome says how. Default: FinishComplete.
	Outcome FinishOutcome
	// Result is the item's result, for FinishComplete only: a JSON
	// document or nil.
	Result json.RawMessage
	// Fail describes the failed attempt, for FinishFail only.
	Fail FailParams
	// Delay is how long a released item waits before it can be claimed
	// again, counted on the database clock, for FinishRelease only:
	// in [0, MaxDelay].
	Delay time.Duration
}

// Finished is what Store.FinishMany did to one Finish.
type Finished struct {
	// Lost is set when the claim no longer held its item: nothing was
	// changed for it.
	Lost bool
	// Dead is set when a FinishFail left the item dead (its attempts
	// used up, or FailParams.Discard).
	Dead bool
}

// FinishMany ends many claims in one transaction, each as its Finish
// says, each fenced on its own claim token: the completions with the
// statements of CompleteMany (one UPDATE per claim token, one counter
// update per barrier), the failed attempts and releases one item at a
// time with those of Fail and Release, their attempts recorded in the
// items' history in the same transaction. It is how a batch of items
// handled together, whose items ended differently, records their
// outcomes at once: all of them commit, or none.
//
// The result is in the order of fs. A claim that no longer holds its
// item is Lost and changes nothing, while the others still finish;
// finishing again with the claim that already completed an item counts
// as done. A claim past its deadline (Claim.Within) while it still holds
// its item fails the whole call with ErrPastDeadline, and nothing is
// changed. Bad input (an incomplete claim, an item twice, an unknown
// outcome, a result that is not JSON, a delay out of range) is an error
// naming the field, before anything is sent.
func (s *Store) FinishMany(ctx context.Context, fs []Finish) ([]Finished, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	if err := s.validFinishes(fs); err != nil {
		return nil, err
	}
	var cs []Completion
	var at []int // the index in fs of each completion
	var others []int
	var timed []Claim
	for i, f := range fs {
		if f.Claim.Within > 0 {
			timed = append(timed, f.Claim)
		}
		if f.Outcome == FinishComplete {
			cs = append(cs, Completion{Claim: f.Claim, Result: f.Result})
			at = append(at, i)
			continue
		}
		others = append(others, i)
	}
	// The failures and releases lock their rows one at a time, in id
	// order, as every batch locks items.
	slices.SortFunc(others, func(a, b int) int { return bytes.Compare(fs[a].Claim.ID[:], fs[b].Claim.ID[:]) })
	var out []Finished
	err := s.inTx(ctx, "finish", func(tx dialect.Tx) error {
		out = make([]Finished, len(fs)) // afresh on each retry
		if err := s.refuseLate(ctx, tx, timed); err != nil {
			return err
		}
		var ready []string
		for _, i := range others {
			f := fs[i]
			var err error
			if f.Outcome == FinishFail {
				out[i].Dead, err = s.fail(ctx, tx, f.Claim, f.Fail)
			} else {
				err = s.releaseClaim(ctx, tx, f.Claim, f.Delay)
				if err == nil && f.Delay == 0 {
					ready = append(ready, f.Claim.Queue)
				}
			}
			if errors.Is(err, ErrClaimLost) {
				// Found so by a read alone: nothing was written for it,
				// and the transaction goes on.
				out[i].Lost = true
				continue
			}
			if err != nil {
				return err
			}
		}
		if len(cs) > 0 {
			lost, err := s.complete(ctx, tx, cs)
			if err != nil {
				return err
			}
			gone := make(map[uuid.UUID]bool, len(lost))
			for _, id := range lost {
				gone[id] = true
			}
			for j, c := range cs {
				out[at[j]].Lost = gone[c.Claim.ID]
			}
		}
		if len(ready) > 0 {
			return s.itemsReady(ctx, tx, ready...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// validFinishes checks fs before anything is sent.
func (s *Store) validFinishes(fs []Finish) error {
	seen := make(map[uuid.UUID]bool, len(fs))
	for i, f := range fs {
		field := func(name string) string { return fmt.Sprintf("finishes[%d].%s", i, name) }
		if err := validClaim(field("Claim"), f.Claim); err != nil {
			return err
		}
		if seen[f.Claim.ID] {
			return invalid(field("Claim"), "item %s appears twice", f.Claim.ID)
		}
		seen[f.Claim.ID] = true
		switch f.Outcome {
		case FinishComplete:
			if f.Result != nil {
				if err := s.validJSON(field("Result"), f.Result); err != nil {
					return err
				}
			}
		case FinishFail:
			if f.Fail.RetryIn < 0 || f.Fail.RetryIn > MaxDelay {
				return invalid(field("Fail.RetryIn"), "%v is outside [0, %v]", f.Fail.RetryIn, MaxDelay)
			}
		case FinishRelease:
			if f.Delay < 0 || f.Delay > MaxDelay {
				return invalid(field("Delay"), "%v is outside [0, %v]", f.Delay, MaxDelay)
			}
		default:
			return invalid(field("Outcome"), "unknown outcome %d", int(f.Outcome))
		}
	}
	return nil
}
