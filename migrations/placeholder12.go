package migrations

import "github.com/plenumdb/plenum/dialect"

// placeholder12 stands for version 12 (items' metadata), which lands on
// its own branch: it changes nothing, so that version 13 follows an
// unbroken sequence until version 12 is merged in its place.
func placeholder12(n Names) Migration {
	none := func(dialect.Schema) []string { return nil }
	return Migration{Version: 12, Name: "placeholder", Changes: []Change{
		{Data: &DataStep{Table: n.Items, Up: none, Down: none}},
	}}
}
