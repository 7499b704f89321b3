package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Backoff is how long a step waits, after a failed attempt (an error, a
// panic or its Timeout passing), before it runs again: Initial after the
// first failure, multiplied by Factor after each one after that, never
// more than Max, each wait moved at random by up to Jitter of itself (0.2
// for ±20%), so that steps that failed together do not all retry
// together. The wait is counted on the database clock. The zero Backoff
// takes the pipeline's (Options.Backoff), and a zero Options.Backoff the
// worker's (worker.KindConfig.Backoff, or the store's core.Options.Backoff).
type Backoff struct {
	// Initial is the wait after the first failed attempt. Required (above
	// zero) when any other field is set.
	Initial time.Duration
	// Max caps every wait. Default (0): core.MaxDelay.
	Max time.Duration
	// Factor multiplies the wait after each failed attempt after the first:
	// 1 waits Initial every time. Default (0): 2.
	Factor float64
	// Jitter is the fraction of each wait, within [0, 1), by which it moves
	// at random either way (and still at most Max). Default 0: none.
	Jitter float64
}

// isZero reports whether b sets nothing.
func (b Backoff) isZero() bool { return b == Backoff{} }

// wait is b's wait after failed attempt (1 for the first).
func (b Backoff) wait(attempt int) time.Duration {
	factor := b.Factor
	if factor == 0 {
		factor = 2
	}
	limit := float64(core.MaxDelay)
	if b.Max > 0 {
		limit = float64(b.Max)
	}
	d := float64(b.Initial) * math.Pow(factor, float64(max(attempt, 1)-1))
	if b.Jitter > 0 {
		d *= 1 + b.Jitter*(2*rand.Float64()-1)
	}
	if math.IsNaN(d) || d > limit {
		d = limit
	}
	return time.Duration(d)
}

// check returns what is wrong with b, "" when nothing is.
func (b Backoff) check() string {
	switch {
	case b.isZero():
		return ""
	case b.Initial <= 0:
		return "Backoff.Initial must be above zero when the Backoff sets anything"
	case b.Initial > core.MaxDelay || b.Max < 0 || b.Max > core.MaxDelay:
		return "Backoff.Initial and Max must be within [0, core.MaxDelay]"
	case b.Max > 0 && b.Max < b.Initial:
		return "Backoff.Max is below Backoff.Initial"
	case b.Factor != 0 && (b.Factor < 1 || math.IsInf(b.Factor, 0) || math.IsNaN(b.Factor)):
		return "Backoff.Factor must be 0 (for 2) or at least 1"
	case b.Jitter < 0 || b.Jitter >= 1 || math.IsNaN(b.Jitter):
		return "Backoff.Jitter must be within [0, 1)"
	}
	return ""
}

// kindConfig is the worker's configuration of the items of a pipeline
// whose registered versions are versions: with neither a step's Timeout
// nor a Backoff (the pipeline's or a step's) in any version, and one
// Options.Timeout for all, that Timeout alone, as before; else the
// longest Timeout of any step of any version (which sets the claim's
// lease) and each item's own Timeout and Backoff, by the version and node
// its payload names (worker.KindConfig.ForItem).
func kindConfig(versions map[int]*definition, defaultTimeout time.Duration) []worker.KindConfig {
	var longest time.Duration
	tuned := false
	var timeout *time.Duration
	bases := make(map[int]time.Duration, len(versions))
	for v, def := range versions {
		base := def.opts.Timeout
		if base == 0 {
			base = defaultTimeout
		}
		bases[v] = base
		longest, tuned = max(longest, base), tuned || !def.opts.Backoff.isZero()
		for _, n := range def.nodes {
			longest = max(longest, n.opts.Timeout)
			tuned = tuned || n.opts.Timeout > 0 || !n.opts.Backoff.isZero()
		}
		if timeout != nil && *timeout != def.opts.Timeout {
			tuned = true
		}
		timeout = &def.opts.Timeout
	}
	if !tuned {
		if timeout != nil && *timeout > 0 {
			return []worker.KindConfig{{Timeout: *timeout}}
		}
		return nil
	}
	type at struct {
		v    int
		node string
	}
	items := map[at]worker.ItemConfig{}
	for v, def := range versions {
		for name, n := range def.nodes {
			ic := worker.ItemConfig{Timeout: bases[v]}
			if n.opts.Timeout > 0 {
				ic.Timeout = n.opts.Timeout
			}
			switch b := n.opts.Backoff; {
			case !b.isZero():
				ic.Backoff = b.wait
			case !def.opts.Backoff.isZero():
				ic.Backoff = def.opts.Backoff.wait
			}
			items[at{v, name}] = ic
		}
	}
	return []worker.KindConfig{{Timeout: longest, ForItem: func(it core.Item) worker.ItemConfig {
		v, node := nodeOf(it.Payload)
		if ic, ok := items[at{v, node}]; ok {
			return ic
		}
		if base, ok := bases[v]; ok {
			return worker.ItemConfig{Timeout: base}
		}
		return worker.ItemConfig{} // a version not registered: its item halts the run
	}}}
}

// nodeOf reads the version and the node an item's envelope names (1 and
// "" if none): it stops reading at the node, which comes after the
// version and before the input (envelope's order), so that the claim
// loop does not read a large input through.
func nodeOf(payload json.RawMessage) (int, string) {
	v := 1
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return v, ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return v, ""
		}
		switch key {
		case "node":
			var node string
			if dec.Decode(&node) != nil {
				return v, ""
			}
			return v, node
		case "v":
			if dec.Decode(&v) != nil || v < 1 {
				v = 1
			}
			continue
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return v, ""
		}
	}
	return v, ""
}
