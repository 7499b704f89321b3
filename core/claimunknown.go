package core

import (
	"context"
	"errors"
	"time"
)

// Bounds of the waits between reads that resolve a claim's unknown commit.
const (
	resolveFirstWait = 50 * time.Millisecond
	resolveMaxWait   = time.Second
)

// resolveClaim settles a claim whose commit outcome is unknown (the
// connection broke while it committed, as when the server restarts): the
// claims in cs, all taken under one token in that transaction, are held
// if and only if it committed. Unresolved, they would be held by a live
// owner that does not know it holds them, and run by nobody until their
// lease ran out. It reads the items again, once the database answers,
// and returns the claims that hold: all of them if the claim committed
// (but one that another transaction has since taken away), none if not.
// It gives up, with unknown (wrapping ErrCommitUnknown), when ctx ends or
// the claim's lease has passed: the reaper then times out whatever did
// commit, and nothing is lost.
func (s *Store) resolveClaim(ctx context.Context, cs []Claim, lease time.Duration, unknown error) ([]Claim, error) {
	deadline := time.Now().Add(lease)
	wait := resolveFirstWait
	held := make([]Claim, 0, len(cs))
	for i := 0; i < len(cs); {
		it, err := s.Get(ctx, cs[i].ID)
		switch {
		case err == nil:
			if it.State == StateClaimed && it.ClaimToken == cs[i].Token {
				held = append(held, cs[i])
			} else if i == 0 && it.ClaimToken != cs[i].Token {
				return nil, nil // the claim did not commit: nothing is held
			}
			i++
			continue
		case errors.Is(err, ErrNotFound):
			i++ // purged since: not held
			continue
		}
		if ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return nil, errors.Join(unknown, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(unknown, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, resolveMaxWait)
	}
	return held, nil
}
