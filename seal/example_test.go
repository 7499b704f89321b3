package seal_test

import (
	"bytes"
	"fmt"

	"github.com/plenumdb/plenum/seal"
)

// A keyring seals with its current key and opens with any key it holds:
// rotate by making a new key current while keeping the old one.
func Example() {
	ring, _ := seal.NewKeyring("2026-11", map[string][]byte{"2026-11": bytes.Repeat([]byte{1}, 32)})
	old, _ := ring.Seal([]byte("payload:email"), []byte(`{"to":"ada"}`))

	_ = ring.Set("2026-12", map[string][]byte{"2026-11": bytes.Repeat([]byte{1}, 32), "2026-12": bytes.Repeat([]byte{2}, 32)})
	fresh, _ := ring.Seal([]byte("payload:email"), []byte(`{"to":"grace"}`))

	for _, env := range [][]byte{old, fresh} {
		id, _ := seal.Inspect(env) // what a reader without keys sees
		plain, err := ring.Open([]byte("payload:email"), env)
		fmt.Printf("sealed (key id %s): %s %v\n", id, plain, err)
	}
	// Output:
	// sealed (key id 2026-11): {"to":"ada"} <nil>
	// sealed (key id 2026-12): {"to":"grace"} <nil>
}
