// Package promhooks is an example adapter from the worker's Hooks to
// Prometheus metrics. It lives in its own module, so that users of Plenum's
// core and worker packages do not inherit the Prometheus client: copy it,
// or depend on this module, as suits.
//
// The metrics, all prefixed by Options.Namespace ("plenum" by default):
//
//	worker_claimed_total{queue,kind}             items claimed
//	worker_started_total{queue,kind}             handlers started
//	worker_outcomes_total{queue,kind,outcome}    completed, failed, snoozed, dead, released, lost
//	worker_handler_duration_seconds{queue,kind,outcome}  handler run time (histogram)
//	queue_depth{queue,state}                     items per state, as the maintenance loop last read them
//	reaper_total{result}                         owners_removed, crashed, timed_out, dead_lettered
//	barriers_fired_total{queue,join}             barriers fired, by join queue; join is "available" or "dead"
//	purged_total{what}                           items, barriers and lanes deleted by retention
//
// Kinds become label values: keep them a small fixed set, as kinds
// registered with a handler are.
package promhooks

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Options configure the metrics.
type Options struct {
	// Namespace prefixes every metric name. Default "plenum".
	Namespace string
	// Buckets are the handler duration histogram's buckets, in seconds.
	// Default prometheus.DefBuckets.
	Buckets []float64
}

// Hooks is a worker.Hooks that counts the worker's events in Prometheus
// metrics. It is safe for concurrent use; one Hooks may serve several
// workers (their counts add up).
type Hooks struct {
	claimed, started *prometheus.CounterVec
	outcomes         *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	depth            *prometheus.GaugeVec
	reaper           *prometheus.CounterVec
	fired            *prometheus.CounterVec
	purged           *prometheus.CounterVec
}

var _ worker.Hooks = (*Hooks)(nil)

// States are the item states the queue depth gauge reports, zero
// included, so that a state that empties reads 0 rather than its last
// value.
var states = []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled}

// New creates the metrics and registers them with reg. It fails, having
// registered nothing, if reg refuses one (a name taken already).
func New(reg prometheus.Registerer, opts Options) (*Hooks, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "plenum"
	}
	buckets := opts.Buckets
	if buckets == nil {
		buckets = prometheus.DefBuckets
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	h := &Hooks{
		claimed:  counter("worker_claimed_total", "Items claimed by the worker.", "queue", "kind"),
		started:  counter("worker_started_total", "Handlers started.", "queue", "kind"),
		outcomes: counter("worker_outcomes_total", "Handler runs by recorded outcome.", "queue", "kind", "outcome"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "worker_handler_duration_seconds", Help: "Handler run time, by outcome.", Buckets: buckets,
		}, []string{"queue", "kind", "outcome"}),
		depth:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "queue_depth", Help: "Items per queue and state, as last read."}, []string{"queue", "state"}),
		reaper: counter("reaper_total", "What reaper passes did: owners removed, claims crashed or timed out, items dead-lettered.", "result"),
		fired:  counter("barriers_fired_total", "Fan-in barriers fired, by join queue and the state the join was created in.", "queue", "join"),
		purged: counter("purged_total", "Rows deleted by retention.", "what"),
	}
	cs := []prometheus.Collector{h.claimed, h.started, h.outcomes, h.duration, h.depth, h.reaper, h.fired, h.purged}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	return h, nil
}

// Event counts e. It never blocks on anything but the metrics' own locks.
func (h *Hooks) Event(_ context.Context, e worker.Event) {
	switch e.Kind {
	case worker.EventClaimed:
		h.claimed.WithLabelValues(e.Queue, e.Item.Kind).Inc()
	case worker.EventStarted:
		h.started.WithLabelValues(e.Queue, e.Item.Kind).Inc()
	case worker.EventCompleted, worker.EventFailed, worker.EventSnoozed, worker.EventDead, worker.EventReleased, worker.EventLost:
		outcome := string(e.Kind)
		h.outcomes.WithLabelValues(e.Queue, e.Item.Kind, outcome).Inc()
		h.duration.WithLabelValues(e.Queue, e.Item.Kind, outcome).Observe(seconds(e.Duration))
	case worker.EventQueueDepth:
		for _, s := range states {
			h.depth.WithLabelValues(e.Queue, string(s)).Set(float64(e.Depth[s]))
		}
	case worker.EventReaped:
		r := e.Reap
		h.reaper.WithLabelValues("owners_removed").Add(float64(r.OwnersRemoved))
		h.reaper.WithLabelValues("crashed").Add(float64(r.Crashed))
		h.reaper.WithLabelValues("timed_out").Add(float64(r.TimedOut))
		h.reaper.WithLabelValues("dead_lettered").Add(float64(r.DeadLettered))
	case worker.EventBarrierFired:
		join := "available"
		if e.Barrier.JoinDead {
			join = "dead"
		}
		h.fired.WithLabelValues(e.Queue, join).Inc()
	case worker.EventPurged:
		h.purged.WithLabelValues("items").Add(float64(e.Purge.Items))
		h.purged.WithLabelValues("barriers").Add(float64(e.Purge.Barriers))
		h.purged.WithLabelValues("lanes").Add(float64(e.Purge.Lanes))
	}
}

func seconds(d time.Duration) float64 { return d.Seconds() }
