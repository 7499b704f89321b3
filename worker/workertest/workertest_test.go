package workertest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
	"github.com/plenumdb/plenum/worker/workertest"
)

type args struct{ N int }

func double(ctx context.Context, job *worker.Job[args]) error {
	switch {
	case job.Args.N < 0:
		return worker.Discard(errors.New("negative"))
	case job.Args.N == 0:
		return errors.New("zero")
	case job.Args.N > 100:
		return worker.Snooze(time.Hour)
	}
	return job.SetResult(2 * job.Args.N)
}

func TestRun_ReportsEveryOutcome(t *testing.T) {
	t.Parallel()
	res := workertest.Run(t, double, args{N: 21}, workertest.Options{})
	var got int
	if res.State != core.StateCompleted || res.Result(&got) != nil || got != 42 {
		t.Errorf("21: %s (%s), result %d; want completed with 42", res.State, res.Outcome, got)
	}
	if res := workertest.Run(t, double, args{N: 0}, workertest.Options{MaxAttempts: 3}); res.Outcome != worker.EventFailed || res.State != core.StateAvailable || res.Err == nil {
		t.Errorf("0 with attempts left: %s, %s, %v; want failed, available again", res.Outcome, res.State, res.Err)
	}
	if res := workertest.Run(t, double, args{N: 0}, workertest.Options{}); res.State != core.StateDead || res.Item.LastError != "zero" {
		t.Errorf("0 on its last attempt: %s, %q; want dead with the error", res.State, res.Item.LastError)
	}
	if res := workertest.Run(t, double, args{N: -1}, workertest.Options{MaxAttempts: 5}); res.State != core.StateDead || res.Item.Attempt != 1 {
		t.Errorf("-1: %s at attempt %d; want discarded at once", res.State, res.Item.Attempt)
	}
	if res := workertest.Run(t, double, args{N: 101}, workertest.Options{}); res.Outcome != worker.EventSnoozed || res.Item.Attempt != 0 {
		t.Errorf("101: %s at attempt %d; want snoozed, no attempt used", res.Outcome, res.Item.Attempt)
	}
	boom := func(ctx context.Context, job *worker.Job[args]) error { panic("boom") }
	if res := workertest.Run(t, boom, args{}, workertest.Options{}); res.State != core.StateDead || !strings.Contains(res.Item.LastError, "panic: boom") {
		t.Errorf("panic: %s, %q; want dead with the panic", res.State, res.Item.LastError)
	}
}
