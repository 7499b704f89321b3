package migrations

import "github.com/plenumdb/plenum/dialect"

// idleLanes11 is version 11: the index retention finds idle lanes by. A
// lane whose key has had no work for a while (next_at NULL) is deleted
// once it has been idle longer than retention's age (updated_at, written
// when it goes idle); the flow index of version 8 holds only lanes with
// a turn. Led by a time, it is sequential (hash-sharded on CockroachDB).
func idleLanes11(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change, sequential func(Change) Change) Migration {
	return Migration{Version: 11, Name: "idle_lanes", Changes: []Change{
		sequential(idx(n.Lanes, "lanes_idle", false, []string{"updated_at"}, dialect.Cond{Column: "next_at", Null: true})),
	}}
}
