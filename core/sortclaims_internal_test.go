package core

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestSortClaims_ClaimOrder shuffles claims of mixed priorities and times
// and checks that sortClaims puts each in claim order, every claim kept
// whole, whatever the permutation's cycles.
func TestSortClaims_ClaimOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1000} {
		want := make([]Claim, n)
		for i := range want {
			want[i] = Claim{Item: Item{ID: uuid.Must(uuid.NewV7()), Priority: i / 300, AvailableAt: t0.Add(time.Duration(i/10) * time.Millisecond), Kind: "k"}}
			want[i].Payload = []byte{byte(i), byte(i >> 8)}
		}
		for round := range 20 {
			got := slices.Clone(want)
			rng := rand.New(rand.NewPCG(uint64(n), uint64(round)))
			rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			sortClaims(got)
			for i := range got {
				if got[i].ID != want[i].ID || !slices.Equal(got[i].Payload, want[i].Payload) {
					t.Fatalf("n=%d round %d: position %d holds %s, want %s", n, round, i, got[i].ID, want[i].ID)
				}
			}
		}
	}
}
