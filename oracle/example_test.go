package oracle_test

import (
	"context"
	"log"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/oracle"
)

// Open an Oracle database through go-ora, open a store on it, and work.
// The user needs EXECUTE on SYS.DBMS_LOCK for the migration lock.
func Example() {
	ctx := context.Background()
	db, err := oracle.Open("oracle://plenum:secret@localhost:1521/FREEPDB1")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, oracle.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err) // names the server setting to change, if one is missing
	}
	if _, err := store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome", Payload: []byte(`{"to":"ada@example.com"}`)}); err != nil {
		log.Fatal(err)
	}
	owner, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		log.Fatal(err)
	}
	claims, err := store.Claim(ctx, core.ClaimParams{Queue: "email", Owner: owner, Limit: 10, Lease: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range claims {
		// ... send the email ...
		if err := store.Complete(ctx, c, []byte(`{"sent":true}`)); err != nil {
			log.Fatal(err)
		}
	}
}
