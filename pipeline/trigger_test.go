package pipeline

import (
	"context"
	"testing"
)

// TestTrigger_RefusesNilsWithoutPanicking checks that the typed triggers
// given a nil engine, and the engine given a nil pipeline, return errors.
func TestTrigger_RefusesNilsWithoutPanicking(t *testing.T) {
	t.Parallel()
	var p *Pipeline[int, int]
	if _, err := p.Trigger(context.Background(), nil, 1); err == nil {
		t.Error("Trigger with a nil engine succeeded")
	}
	if _, err := p.TriggerTx(context.Background(), nil, nil, 1); err == nil {
		t.Error("TriggerTx with a nil engine succeeded")
	}
	e := &Engine{defs: map[string]map[int]*definition{}}
	if _, err := e.Trigger(context.Background(), p, 1); err == nil {
		t.Error("Trigger of a nil pipeline succeeded")
	}
	if err := e.Register(p); err == nil {
		t.Error("Register of a nil pipeline succeeded")
	}
}
