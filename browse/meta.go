package browse

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// metaFilter is which of an item's tags or metadata an Items filter
// selects on: a tag (metaTag), a metadata key whatever its value
// (metaKey), or a key holding a value (metaKeyValue); metaNone for none.
type metaFilter int

const (
	metaNone metaFilter = iota
	metaTag
	metaKey
	metaKeyValue
)

// metaFilters are the filters of tags and metadata, in catalog order.
var metaFilters = []metaFilter{metaTag, metaKey, metaKeyValue}

// validMetaFilter checks f's Tag, MetaKey and MetaValue, and says which
// one Items selects on.
func (r *Reader) validMetaFilter(f ItemFilter) (metaFilter, []any, error) {
	if err := r.s.ValidName("Tag", f.Tag, migrations.MaxTagLen); err != nil {
		return metaNone, nil, err
	}
	if err := r.s.ValidName("MetaKey", f.MetaKey, migrations.MaxTagLen); err != nil {
		return metaNone, nil, err
	}
	if len(f.MetaValue) > migrations.MaxMetadataValueLen {
		return metaNone, nil, invalid("MetaValue", "%d bytes is over the limit of %d", len(f.MetaValue), migrations.MaxMetadataValueLen)
	}
	if err := r.s.ValidName("MetaValue", f.MetaValue, migrations.MaxMetadataValueLen); err != nil {
		return metaNone, nil, err
	}
	switch {
	case f.MetaValue != "" && f.MetaKey == "":
		return metaNone, nil, invalid("MetaValue", "needs a MetaKey: a value is looked up under its key")
	case f.Tag != "" && f.MetaKey != "":
		return metaNone, nil, invalid("Tag", "and MetaKey together: filter on one of them")
	case f.Tag != "":
		return metaTag, []any{f.Tag}, nil
	case f.MetaValue != "":
		return metaKeyValue, []any{f.MetaKey, f.MetaValue}, nil
	case f.MetaKey != "":
		return metaKey, []any{f.MetaKey}, nil
	}
	return metaNone, nil, nil
}

// metaItems is Items for a filter on a tag or on metadata: the item ids
// come from item_meta's indexes, newest first, joined to the items by
// their primary key. Alone, the filter is one keyset page of the index.
// With other filters (bits), a call reads the ids of a window of at most
// f.SearchRows matching rows below Before (from the index alone), then
// the items of that range that pass the other filters: a bounded read
// however few of them do, a page that may be short (Searched) as a Kind
// filter's is.
func (r *Reader) metaItems(ctx context.Context, f ItemFilter, mf metaFilter, margs []any, bits int, eq []any, limit int) (ItemPage, error) {
	before := f.Before
	if before == uuid.Nil {
		before = uuid.Max
	}
	low := uuid.Nil
	searched, examined := false, 0
	if bits != 0 {
		w := searchWindow(1, f.SearchRows)
		args := append(append([]any{}, margs...), r.s.Dialect.UUID(before))
		ids, err := storesql.Rows(ctx, r.s.Handle, "items", r.s.SQL(qMetaWindow(r.s, mf, w)), r.scanID, args...)
		if err != nil {
			return ItemPage{}, err
		}
		examined = len(ids)
		if len(ids) == w {
			low, searched = ids[len(ids)-1], true
		}
	}
	args := append(append([]any{}, margs...), r.s.Dialect.UUID(before))
	if bits != 0 {
		args = append(args, r.s.Dialect.UUID(low), r.s.Dialect.UUID(before), r.s.Dialect.UUID(low))
		args = append(args, eq...)
	}
	items, err := storesql.Rows(ctx, r.s.Handle, "items", r.s.SQL(qMetaItems(r.s, mf, bits, f.State, limit)), r.s.ScanItem, args...)
	if err != nil {
		return ItemPage{}, err
	}
	p := fullPage(items, limit)
	p.Examined = examined
	if p.Next == uuid.Nil && searched {
		p.Next, p.Searched = low, true
	}
	return p, nil
}

// scanID scans one id column.
func (r *Reader) scanID(row storesql.Scanner) (uuid.UUID, error) {
	var id uuid.UUID
	err := row.Scan(&id)
	return id, err
}

// metaWhere is the condition of a filter on item_meta (aliased m), its
// binds the tag, the key, or the key and the value: an equality prefix of
// item_meta_name (kind, name, item_id) or of item_meta_value (name,
// value, item_id), whose item ids are then in order. The value index has
// no kind: a tag's value is NULL, which equals no value, and the kind is
// checked on the rows the prefix found.
func metaWhere(mf metaFilter) string {
	switch mf {
	case metaTag:
		return "m.kind = '" + migrations.MetaTag + "' AND m.name = ?"
	case metaKey:
		return "m.kind = '" + migrations.MetaValue + "' AND m.name = ?"
	}
	return "m.name = ? AND m.value = ? AND m.kind = '" + migrations.MetaValue + "'"
}

// qMetaWindow is the item ids of the w newest rows of a filter on
// item_meta below a bound id: the range a search with other filters
// examines, read from the index alone.
func qMetaWindow(s *seam, mf metaFilter, w int) string {
	return "SELECT m.item_id FROM {itemmeta} m WHERE " + metaWhere(mf) + " AND m.item_id < ? ORDER BY m.item_id DESC" + s.Dialect.Limit(w)
}

// qMetaItems is a page of n items of a filter on item_meta below a bound
// id: alone (bits 0), the n newest; with the other filters of bits
// (queue, state, kind, run, as itemShape numbers them), those down to a
// low id (included), each bound given twice, that pass them on the
// joined item.
func qMetaItems(s *seam, mf metaFilter, bits int, state core.State, n int) string {
	cols := qualified("i", s.ItemColumns)
	if bits == 0 {
		// Alone: the n newest ids of the index, then n items by their
		// primary key, sorted again (n rows at most).
		return "SELECT " + cols + " FROM (" + qMetaWindow(s, mf, n) + ") w JOIN {items} i ON i.id = w.item_id ORDER BY i.id DESC"
	}
	var b strings.Builder
	b.WriteString("SELECT " + cols + " FROM {itemmeta} m JOIN {items} i ON i.id = m.item_id WHERE ")
	// The bounds are given to both tables: a planner that merges the
	// two in id order then starts each at the bound, not at the newest
	// row.
	b.WriteString(metaWhere(mf) + " AND m.item_id < ? AND m.item_id >= ? AND i.id < ? AND i.id >= ?")
	if bits&1 != 0 {
		b.WriteString(" AND i.queue = ?")
	}
	if bits&2 != 0 {
		b.WriteString(" AND i.state = '" + string(state) + "'")
	}
	if bits&4 != 0 {
		b.WriteString(" AND i.kind = ?")
	}
	if bits&8 != 0 {
		b.WriteString(" AND i.run_id = ?")
	}
	b.WriteString(" ORDER BY m.item_id DESC" + s.Dialect.Limit(n))
	return b.String()
}

// qualified is a list of columns, each prefixed with alias.
func qualified(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		parts[i] = alias + "." + c
	}
	return strings.Join(parts, ", ")
}
