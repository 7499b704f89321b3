package chaos

import (
	"fmt"
	"io"
	"strings"

	"github.com/plenumdb/plenum/internal/fault"
)

// applyFaults installs the fault rules of spec (internal/fault's Parse
// form) in this process, for the rest of its life.
func applyFaults(spec string) error {
	rules, err := fault.Parse(spec)
	if err != nil {
		return fmt.Errorf("chaos worker: %w", err)
	}
	if len(rules) > 0 {
		fault.Install(rules)
	}
	return nil
}

// DefaultPoints are the fault rules a round's workers run with by
// default: a kill at each injection point of the core and the runtime,
// rarely at the points every item passes and often at the rare ones (a
// barrier's firing, a dispatch page, a reaper's crash batch), and a hang
// past the lease between a handler's return and its completion, which the
// reaper must count as a timeout. Retention is off in a round (it would
// delete the evidence), so its point is never reached.
func DefaultPoints() string {
	return strings.Join([]string{
		"after-claim=kill@0.0002",
		"fence-before-commit=kill@0.0002",
		"complete-before-arrival=kill@0.0002",
		"before-completion=hang:20s@0.0002",
		"fire-before-join=kill@0.2",
		"dispatch-between-pages=kill@0.05",
		"reap-before-crash-count=kill@0.1",
	}, ",")
}

// reportFired writes how often each point's rule fired in this process,
// for the harness to add up.
func reportFired(out io.Writer) {
	for _, p := range fault.Points() {
		if n := fault.Fired(p); n > 0 {
			fmt.Fprintf(out, "fired %s %d\n", p, n)
		}
	}
}

// killedAt returns the point a worker's last words say it killed itself
// at, or "".
func killedAt(stderr string) string {
	const mark = "plenum/fault: kill at "
	i := strings.LastIndex(stderr, mark)
	if i < 0 {
		return ""
	}
	p, _, _ := strings.Cut(stderr[i+len(mark):], "\n")
	return strings.TrimSpace(p)
}
