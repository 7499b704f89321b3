package stoptest

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestStop_ReturnsTheErrorAndGivesTheGrace(t *testing.T) {
	boom := errors.New("boom")
	var deadline time.Time
	err := Stop(t, func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		return boom
	}, 5*time.Second)
	if !errors.Is(err, boom) {
		t.Errorf("Stop = %v, want the stop's error", err)
	}
	if left := time.Until(deadline); left <= 0 || left > 5*time.Second {
		t.Errorf("the stop's context ends in %v, want within the 5s grace", left)
	}
}
