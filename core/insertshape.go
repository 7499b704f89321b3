package core

// insertShape is what decides the text of an item's row in an INSERT:
// whether it is delayed, and whether it has a flow key. A statement's rows
// are all of one shape.
type insertShape struct {
	later, keyed bool
}

func shapeOf(sp *ItemSpec) insertShape {
	return insertShape{later: sp.Delay > 0, keyed: sp.FlowKey != ""}
}

// rank orders shapes: rows available at once first, then delayed ones;
// within each, rows without a flow key first.
func (sh insertShape) rank() int {
	r := 0
	if sh.later {
		r += 2
	}
	if sh.keyed {
		r++
	}
	return r
}

// row is the shape's row template.
func (sh insertShape) row() string {
	switch {
	case sh.later && sh.keyed:
		return insertRowLaterKeyed
	case sh.later:
		return insertRowLater
	case sh.keyed:
		return insertRowNowKeyed
	}
	return insertRowNow
}

// insertColumnsKeyed are the columns of a row with a flow key, written as
// insertRowNowKeyed and insertRowLaterKeyed: the plain row's and the key
// and cost after them. A row without a key writes neither, so that the
// enqueue of most items binds nothing more for flow control.
var insertColumnsKeyed = append(append([]string(nil), insertColumns...), "flow_key", "cost")

const (
	insertRowNowKeyed   = insertRowNow + ", ?, ?"
	insertRowLaterKeyed = insertRowLater + ", ?, ?"
	argsPerKeyedInsert  = argsPerInsert + 2
)

// keyedInsertRowsMax is insertRowsMax for rows with a flow key, which
// bind two more values each.
func (s *Store) keyedInsertRowsMax() int {
	return min(s.insertRowsMax(), max(1, s.caps.MaxBindParams/argsPerKeyedInsert))
}
