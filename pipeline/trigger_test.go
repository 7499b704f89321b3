package pipeline

import (
	"context"
	"strings"
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
	if err := e.Register(); err == nil {
		t.Error("Register of nothing succeeded")
	}
}

// TestRegister_RefusesAVersionTwiceAndANameAgain: a name and version
// given twice in one call, and a name an earlier call registered, are
// refused before anything is registered.
func TestRegister_RefusesAVersionTwiceAndANameAgain(t *testing.T) {
	t.Parallel()
	a, err1 := Define("p", inc("a"))
	b, err2 := Define("p", inc("b"))
	c, err3 := Define("p", inc("c"), Options{Version: 2})
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	e := &Engine{defs: map[string]map[int]*definition{}}
	if err := e.Register(a, b); err == nil || !strings.Contains(err.Error(), `pipeline "p" version 1 given twice`) {
		t.Errorf("two definitions of version 1: %v", err)
	}
	e.defs["p"] = map[int]*definition{1: a.def}
	if err := e.Register(c); err == nil || !strings.Contains(err.Error(), `pipeline "p" registered twice`) || e.defs["p"][2] != nil {
		t.Errorf("version 2 in a call of its own: %v", err)
	}
	if _, err := e.lookup(c); err == nil || !strings.Contains(err.Error(), `pipeline "p" version 2 is not registered`) {
		t.Errorf("lookup of an unregistered version: %v", err)
	}
}
