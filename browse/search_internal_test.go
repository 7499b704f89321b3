package browse

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// An item whose state changed between the reads of two streams is read by
// both: the page shows it once, and still fills to its limit with others.
func TestSearchPage_ItemReadByTwoStreamsShowsOnce(t *testing.T) {
	t.Parallel()
	id := func(b byte) uuid.UUID { return uuid.UUID{b} }
	moved := core.Item{ID: id(5), State: core.StateClaimed}
	found := []core.Item{
		{ID: id(7), State: core.StateAvailable},
		{ID: id(5), State: core.StateAvailable}, // the same item, read before it moved
		{ID: id(3), State: core.StateAvailable},
		moved,
		{ID: id(2), State: core.StateCompleted},
	}
	page := searchPage(found, uuid.Nil, 3)
	got := make([]uuid.UUID, len(page.Items))
	for i, it := range page.Items {
		got[i] = it.ID
	}
	if want := []uuid.UUID{id(7), id(5), id(3)}; !slices.Equal(got, want) {
		t.Fatalf("page = %v, want %v", got, want)
	}
	if page.Next != id(3) || page.Searched {
		t.Errorf("Next = %v, Searched = %v; want %v, false", page.Next, page.Searched, id(3))
	}

	// A short page below a frontier keeps only what is certain.
	page = searchPage(found, id(4), 10)
	if len(page.Items) != 2 || page.Items[0].ID != id(7) || page.Items[1].ID != id(5) {
		t.Errorf("page below frontier %v = %v, want items 7 and 5 once each", id(4), page.Items)
	}
	if page.Next != id(4) || !page.Searched {
		t.Errorf("Next = %v, Searched = %v; want %v, true", page.Next, page.Searched, id(4))
	}
}
