package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// What a pipeline's EngineOptions.Codec seals, each bound to its
// pipeline's name and its place (the additional data, sealAAD), so that
// a sealed value moved to another pipeline, or from one place to
// another (a step's output passed off as the run's input), does not
// open:
const (
	sealIn      = "in"      // a step's input, in its item's payload (and a RepeatUntil's last output)
	sealOut     = "out"     // a step's output: its item's result
	sealInput   = "input"   // the run's input
	sealOutput  = "output"  // the run's output
	sealContext = "context" // a value of the run's context, with its key
)

// sealAAD is the additional data of a value of pipeline name at place.
func sealAAD(name, place string) []byte { return []byte("plenum:pipeline:" + name + ":" + place) }

// signalAAD is the additional data of a signal's payload: the run it is
// sent to and its name, which the sender knows without the definition.
func signalAAD(run uuid.UUID, name string) []byte {
	return []byte("plenum:signal:" + run.String() + ":" + name)
}

// seal returns b sealed, bound to aad; b itself without a codec, or
// when b is empty.
func (e *Engine) seal(aad []byte, b json.RawMessage) (json.RawMessage, error) {
	if e.cfg.Codec == nil || len(b) == 0 {
		return b, nil
	}
	s, err := e.cfg.Codec.Seal(aad, b)
	if err != nil {
		return nil, fmt.Errorf("plenum/pipeline: seal: %w", err)
	}
	return s, nil
}

// open returns b opened for aad; b itself without a codec, or when b is
// empty. A value that does not open is a permanent error: no retry can
// open it (a key back in the ring and a revive can).
func (e *Engine) open(aad []byte, b json.RawMessage) (json.RawMessage, error) {
	if e.cfg.Codec == nil || len(b) == 0 {
		return b, nil
	}
	p, err := e.cfg.Codec.Open(aad, b)
	if err != nil {
		return nil, Permanent(fmt.Errorf("plenum/pipeline: open a sealed value: %w", err))
	}
	return p, nil
}

// shown is b opened for aad when the engine can open it, else b as
// stored: what Get shows.
func (e *Engine) shown(aad []byte, b json.RawMessage) json.RawMessage {
	if p, err := e.open(aad, b); err == nil {
		return p
	}
	return b
}

// openEnvelope opens the sealed values of env, an item's payload of def:
// its input and a RepeatUntil's last output.
func (e *Engine) openEnvelope(def *definition, env *envelope) error {
	var err error
	if env.In, err = e.open(sealAAD(def.name, sealIn), env.In); err != nil {
		return err
	}
	if env.Rep != nil && len(env.Rep.Out) > 0 {
		if env.Rep.Out, err = e.open(sealAAD(def.name, sealIn), env.Rep.Out); err != nil {
			return err
		}
	}
	return nil
}
