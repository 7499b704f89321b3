package core

import (
	"context"

	"github.com/google/uuid"
)

// CancelledRun is the outcome of CancelRun.
type CancelledRun struct {
	// Items counts the items this call cancelled.
	Items int64
}

// CancelRun cancels a run: the run ends cancelled first (so that what
// follows cannot be undone by its own items), then every unfinished item
// of the run is cancelled, in pages of bounded size, each page in its own
// transaction: a holder of a claim loses it (its fenced writes are refused
// and Store.Lost reports it, so a worker's handler context ends), and each
// item counts as a failure at its barrier. A barrier of a cancelled run
// that fires enqueues its join already cancelled, so no join runs, and an
// Expand of a cancelled item stops at its next batch. Cancelling a
// cancelled run cancels whatever of it is still unfinished (a call cut
// short resumes); a completed run gives ErrRunFinished.
func (s *Store) CancelRun(ctx context.Context, run uuid.UUID) (CancelledRun, error) {
	return CancelledRun{}, errNotYet("CancelRun")
}
