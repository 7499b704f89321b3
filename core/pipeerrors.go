package core

import "errors"

var (
	// ErrRunFinished means the run is completed or cancelled, which the
	// operation cannot change (a signal to it, a revive of it).
	ErrRunFinished = errors.New("plenum: run already finished")

	// ErrNotFired means ReviveBarrier was asked for a barrier that has not
	// fired: its dead children are revived with Revive, one by one.
	ErrNotFired = errors.New("plenum: barrier has not fired")
)
