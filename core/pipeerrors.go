package core

import "errors"

var (
	// ErrRunFinished means the run is completed or cancelled, which the
	// operation cannot change (a signal to it, a revive of it).
	ErrRunFinished = errors.New("plenum: run already finished")

	// ErrNotFired means ReviveBarrier was asked for a barrier that has not
	// fired: its dead children are revived with Revive, one by one.
	ErrNotFired = errors.New("plenum: barrier has not fired")

	// ErrNothingToRevive means ReviveRun was asked for a halted run that
	// has no dead item to revive and no item left to run (its items
	// deleted by a retention that did not keep them, or a run halted
	// through UpdateRun with nothing enqueued): it stays halted, since it
	// would otherwise be running for ever with nothing to run. Cancel it
	// (CancelRun), or enqueue what it should run and move it with
	// UpdateRun.
	ErrNothingToRevive = errors.New("plenum: run has nothing to revive")
)
