package worker

import (
	"fmt"
	"log/slog"
	"maps"
	"testing"

	"github.com/plenumdb/plenum/core"
)

// TestClaimLimits_KindsThatSetOneUpToWhatAClaimCarries checks that the
// limits a worker claims with are those of its kinds that set MaxAttempts,
// none where no kind does, and none where more kinds do than one claim
// carries, rather than a claim that every call would refuse.
func TestClaimLimits_KindsThatSetOneUpToWhatAClaimCarries(t *testing.T) {
	t.Parallel()
	withKinds := func(n, limit int) *Worker {
		w := &Worker{handlers: map[string]*handler{}, log: slog.New(slog.DiscardHandler)}
		for i := range n {
			kind := fmt.Sprint("k", i)
			w.handlers[kind] = &handler{kind: kind, cfg: KindConfig{MaxAttempts: limit}}
		}
		return w
	}
	w := withKinds(2, 5)
	w.handlers["free"] = &handler{kind: "free"}
	if got, want := w.claimLimits(), map[string]int{"k0": 5, "k1": 5}; !maps.Equal(got, want) {
		t.Errorf("two kinds of 5 and one without: %v, want %v", got, want)
	}
	if got := withKinds(3, 0).claimLimits(); got != nil {
		t.Errorf("no kind sets one: %v, want none", got)
	}
	if got := withKinds(core.MaxClaimKinds, 2).claimLimits(); len(got) != core.MaxClaimKinds {
		t.Errorf("%d kinds: %d limits, want all", core.MaxClaimKinds, len(got))
	}
	if got := withKinds(core.MaxClaimKinds+1, 2).claimLimits(); got != nil {
		t.Errorf("%d kinds: %d limits, want none", core.MaxClaimKinds+1, len(got))
	}
}
