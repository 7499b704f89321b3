package browse_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// A Reader of no open store refuses every read with an *core.InputError
// naming the store, instead of failing on a nil handle.
func TestNew_NoOpenStoreRefusesEveryRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, r := range map[string]*browse.Reader{"nil": browse.New(nil), "zero": browse.New(&core.Store{})} {
		reads := map[string]error{}
		_, reads["Items"] = r.Items(ctx, browse.ItemFilter{})
		_, reads["Runs"] = r.Runs(ctx, browse.RunFilter{})
		_, reads["RunBarriers"] = r.RunBarriers(ctx, browse.RunBarriersParams{})
		_, reads["Owners"] = r.Owners(ctx, browse.OwnersParams{})
		_, reads["QueueSummaries"] = r.QueueSummaries(ctx, browse.QueueSummaryParams{})
		for read, err := range reads {
			var in *core.InputError
			if !errors.As(err, &in) || in.Field != "store" {
				t.Errorf("%s store: %s = %v, want an *core.InputError on store", name, read, err)
			}
		}
	}
}
