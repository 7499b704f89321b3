package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestRunInput_OutsideARunIsAnError checks that RunInput, called where no
// run's function is running, says so instead of returning a zero input.
func TestRunInput_OutsideARunIsAnError(t *testing.T) {
	t.Parallel()
	if _, err := RunInput[int](context.Background()); err == nil || !strings.Contains(err.Error(), "not called from") {
		t.Errorf("RunInput outside a run: %v, want an error saying so", err)
	}
}

// TestInputCache_DropsTheOldestPastItsBound checks that the engine's
// cache of run inputs keeps the latest inputs within inputCacheBytes,
// dropping the oldest first, and keeps no input too large for it.
func TestInputCache_DropsTheOldestPastItsBound(t *testing.T) {
	t.Parallel()
	var c inputCache
	quarter := json.RawMessage(`"` + strings.Repeat("x", inputCacheBytes/4-2) + `"`)
	runs := make([]uuid.UUID, 5)
	for i := range runs {
		runs[i] = uuid.New()
		c.put(runs[i], quarter)
	}
	if _, ok := c.get(runs[0]); ok {
		t.Error("the oldest input is still kept past the bound")
	}
	for _, r := range runs[1:] {
		if in, ok := c.get(r); !ok || len(in) != len(quarter) {
			t.Errorf("input of %s: kept %v, %d bytes; want the latest four kept", r, ok, len(in))
		}
	}
	if c.bytes > inputCacheBytes {
		t.Errorf("the cache holds %d bytes, over its bound of %d", c.bytes, inputCacheBytes)
	}
	big := uuid.New()
	c.put(big, append(quarter, ' '))
	if _, ok := c.get(big); ok {
		t.Error("an input over a quarter of the bound was kept")
	}
}
