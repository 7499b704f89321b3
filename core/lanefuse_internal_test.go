package core

import (
	"slices"
	"testing"
)

// TestLaneParts_SharesLikeTheFill checks laneParts against fillFromLanes
// given lanes with more items than their room: the same parts, by
// weight in rounds, in turn order, bounded by room and by n.
func TestLaneParts_SharesLikeTheFill(t *testing.T) {
	for _, c := range []struct {
		name    string
		weights []int
		rooms   []int
		n       int
		want    []int
	}{
		{"even", []int{1, 1, 1}, []int{100, 100, 100}, 7, []int{3, 2, 2}},
		{"weighted", []int{3, 1}, []int{100, 100}, 8, []int{6, 2}},
		{"weight past n", []int{5, 1}, []int{100, 100}, 4, []int{4, 0}},
		{"room", []int{1, 1, 1}, []int{1, 0, 100}, 10, []int{1, 0, 9}},
		{"all full", []int{1, 1}, []int{0, 0}, 10, []int{0, 0}},
		{"less room than n", []int{2, 1}, []int{3, 2}, 100, []int{3, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lanes := make([]*laneRow, len(c.weights))
			filled := make([]*laneRow, len(c.weights))
			for i, w := range c.weights {
				lanes[i] = &laneRow{limit: Limit{Weight: w}, room: c.rooms[i]}
				filled[i] = &laneRow{limit: Limit{Weight: w}, room: c.rooms[i], units: c.rooms[i], items: make([]laneItem, c.n+1)}
			}
			got := laneParts(lanes, c.n)
			if !slices.Equal(got, c.want) {
				t.Errorf("laneParts = %v, want %v", got, c.want)
			}
			fillFromLanes(filled, c.n)
			var fill []int
			for _, l := range filled {
				fill = append(fill, l.taken)
			}
			if !slices.Equal(got, fill) {
				t.Errorf("laneParts = %v, fillFromLanes took %v", got, fill)
			}
		})
	}
}
