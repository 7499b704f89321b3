package dashboard

import (
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// stepKey names a box of a pipeline's graph: a node, and the role of the
// items drawn in it ("" for the node's own item, "collapse" or "combine"
// for the join of an expand or a divide).
type stepKey struct{ Node, Role string }

// stepState is what a run's items say of one box of its graph: the
// overlay the run's page draws on the definition.
type stepState struct {
	// Items counts the items read that run the box's node in its role
	// (an expand's body has one per element).
	Items int
	// States counts them by state, in stateOrder, "waiting" standing for
	// an available item waiting for a signal.
	States []stateCount
	// Attempts is the sum of their attempts.
	Attempts int
	// Started is the first claim among them; Finished the last finish,
	// set only once every one of them has finished.
	Started, Finished time.Time
	// Fanouts counts the barriers their items opened (an expand or
	// divide that ran in several fan-outs has several); Arrived, Failed
	// and Expected add those barriers' counts up.
	Fanouts                   int
	Arrived, Failed, Expected int64
}

// stateCount is one state's count in a stepState.
type stateCount struct {
	State string
	N     int
}

// stateOrder ranks the states an overlay shows, the one that most needs
// an eye first: the first present is the box's colour.
var stateOrder = []string{"dead", "claimed", "waiting", "available", "completed", "cancelled"}

// Main is the state that colours the box: the first of stateOrder
// present, or "none" for a box no item read has reached.
func (s *stepState) Main() string {
	if s == nil || len(s.States) == 0 {
		return "none"
	}
	return s.States[0].State
}

// Took is how long the box's items ran, from the first claim to the last
// finish, or zero while one is unfinished.
func (s *stepState) Took() time.Duration {
	if s == nil || s.Started.IsZero() || s.Finished.IsZero() || s.Finished.Before(s.Started) {
		return 0
	}
	return s.Finished.Sub(s.Started)
}

// stepStates groups a run's items (and the barriers they opened) by the
// box of the graph they are drawn in. It reads nothing: the run's page
// has read the items and barriers already, up to runTreeCap of each.
func stepStates(items []core.Item, barriers []core.Barrier) map[stepKey]*stepState {
	out := map[stepKey]*stepState{}
	counts := map[stepKey]map[string]int{}
	unfinished := map[stepKey]bool{}
	keyOf := map[uuid.UUID]stepKey{}
	for i := range items {
		it := &items[i]
		node, role := stepOf(it)
		if node == "" {
			continue
		}
		if role != "collapse" && role != "combine" {
			role = "" // the Op: what the node is, not a role of its own
		}
		k := stepKey{node, role}
		keyOf[it.ID] = k
		s := out[k]
		if s == nil {
			s = &stepState{}
			out[k], counts[k] = s, map[string]int{}
		}
		s.Items++
		s.Attempts += it.Attempt
		st := string(it.State)
		if it.Waiting() {
			st = "waiting"
		}
		counts[k][st]++
		if !it.ClaimedAt.IsZero() && (s.Started.IsZero() || it.ClaimedAt.Before(s.Started)) {
			s.Started = it.ClaimedAt
		}
		if it.FinishedAt.IsZero() {
			unfinished[k] = true
		} else if it.FinishedAt.After(s.Finished) {
			s.Finished = it.FinishedAt
		}
	}
	for k, s := range out {
		for _, st := range stateOrder {
			if n := counts[k][st]; n > 0 {
				s.States = append(s.States, stateCount{st, n})
			}
		}
		if unfinished[k] {
			s.Finished = time.Time{}
		}
	}
	for _, b := range barriers {
		k, ok := keyOf[b.OwnerID]
		if !ok {
			continue // opened by an item the page did not read
		}
		s := out[k]
		s.Fanouts++
		s.Arrived += b.Arrived
		s.Failed += b.Failed
		s.Expected += b.Expected
	}
	return out
}

// graphStates is what the table of a graph's states gets: the graph and
// the database's now.
type graphStates struct {
	Now   time.Time
	Graph *graphView
}
