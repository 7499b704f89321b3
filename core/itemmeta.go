package core

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Bounds of an item's tags and metadata (ItemSpec.Tags and Metadata).
const (
	// MaxTags is the most tags one item carries.
	MaxTags = migrations.MaxTags
	// MaxMetadataKeys is the most metadata keys one item carries.
	MaxMetadataKeys = migrations.MaxMetadataKeys
	// MaxTagLen bounds a tag and a metadata key, in characters.
	MaxTagLen = migrations.MaxTagLen
	// MaxMetadataValueLen bounds one metadata value, in bytes.
	MaxMetadataValueLen = migrations.MaxMetadataValueLen
	// MaxMetadataBytes bounds one item's tags, keys and values together,
	// in bytes.
	MaxMetadataBytes = migrations.MaxMetadataLen
)

// Metadata is what an item was enqueued with besides its payload: its
// tags, sorted, and its metadata's keys and values (ItemSpec.Tags and
// ItemSpec.Metadata).
type Metadata struct {
	Tags   []string
	Values map[string]string
}

// validMeta checks a spec's tags and metadata (at names the spec, as
// "specs[3]."): at most MaxTags tags and MaxMetadataKeys keys, each tag
// and key 1 to MaxTagLen characters under the rules of every name
// (validName: no control characters), each value 1 to
// MaxMetadataValueLen bytes under the same rules, all of it at most
// MaxMetadataBytes. A tag given twice counts once.
func validMeta(at string, tags []string, values map[string]string) error {
	if len(tags) > MaxTags {
		return invalid(at+"Tags", "%d tags is over the limit of %d", len(tags), MaxTags)
	}
	if len(values) > MaxMetadataKeys {
		return invalid(at+"Metadata", "%d keys is over the limit of %d", len(values), MaxMetadataKeys)
	}
	total := 0
	for i, t := range tags {
		if err := validName(fmt.Sprintf("%sTags[%d]", at, i), t, MaxTagLen, true); err != nil {
			return err
		}
		total += len(t)
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if err := validName(at+"Metadata key", k, MaxTagLen, true); err != nil {
			return err
		}
		if len(values[k]) > MaxMetadataValueLen {
			return invalid(fmt.Sprintf("%sMetadata[%q]", at, k), "%d bytes is over the limit of %d", len(values[k]), MaxMetadataValueLen)
		}
		if err := validName(fmt.Sprintf("%sMetadata[%q]", at, k), values[k], MaxMetadataValueLen, true); err != nil {
			return err
		}
		total += len(k) + len(values[k])
	}
	if total > MaxMetadataBytes {
		return invalid(at+"Metadata", "tags, keys and values of %d bytes together are over the limit of %d", total, MaxMetadataBytes)
	}
	return nil
}

// metaRow is one row of the item_meta table.
type metaRow struct {
	item       uuid.UUID
	kind, name string
	value      string
	hasValue   bool
}

// metaRows are the rows of the new items among specs (out, insertItems'
// results: an item that existed keeps what it was enqueued with).
func metaRows(specs []ItemSpec, out []EnqueueResult) []metaRow {
	var rows []metaRow
	for i := range specs {
		sp := &specs[i]
		if out[i].Existed || (len(sp.Tags) == 0 && len(sp.Metadata) == 0) {
			continue
		}
		for _, t := range slices.Compact(slices.Sorted(slices.Values(sp.Tags))) {
			rows = append(rows, metaRow{item: out[i].ID, kind: migrations.MetaTag, name: t})
		}
		for _, k := range slices.Sorted(maps.Keys(sp.Metadata)) {
			rows = append(rows, metaRow{item: out[i].ID, kind: migrations.MetaValue, name: k, value: sp.Metadata[k], hasValue: true})
		}
	}
	return rows
}

// insertMeta writes the tags and metadata of the new items among specs,
// in q (the enqueue's transaction): one INSERT per metaInsertMax rows,
// none where no spec has any.
func (s *Store) insertMeta(ctx context.Context, q dialect.Querier, specs []ItemSpec, out []EnqueueResult) error {
	rows := metaRows(specs, out)
	for _, batch := range chunks(rows, s.metaInsertMax()) {
		args := make([]any, 0, len(batch)*argsPerMeta)
		for _, r := range batch {
			var v any
			if r.hasValue {
				v = r.value
			}
			args = append(args, s.d.UUID(r.item), r.kind, r.name, v)
		}
		if _, err := q.ExecContext(ctx, s.metaInsertSQL(len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}

// metaInsertMax is the most rows of tags and metadata one INSERT carries.
func (s *Store) metaInsertMax() int {
	return max(1, min(s.insertRowsMax(), s.caps.MaxBindParams/argsPerMeta))
}

// metaReadMax is the most items one read of metadata lists.
func (s *Store) metaReadMax() int { return s.inListMax(0) }

// ItemMetadata returns the tags and metadata of the items ids, by id:
// one query per chunk of ids (the dialect's IN-list limit), read outside
// any transaction. Items with neither tags nor metadata, and ids that
// name no item, are absent from the map.
func (s *Store) ItemMetadata(ctx context.Context, ids ...uuid.UUID) (map[uuid.UUID]Metadata, error) {
	out := map[uuid.UUID]Metadata{}
	ids = slices.Compact(slices.SortedFunc(slices.Values(ids), func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }))
	for _, chunk := range chunks(ids, s.metaReadMax()) {
		err := s.read(ctx, "item metadata", func() error {
			got, err := s.readMeta(ctx, s.db, chunk)
			if err == nil {
				maps.Copy(out, got)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readMeta reads the rows of ids' metadata in q.
func (s *Store) readMeta(ctx context.Context, q dialect.Querier, ids []uuid.UUID) (map[uuid.UUID]Metadata, error) {
	rows, err := q.QueryContext(ctx, s.sql(s.qMetaRead(len(ids))), s.idArgs(ids)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uuid.UUID]Metadata{}
	for rows.Next() {
		var (
			id         uuid.UUID
			kind, name string
			value      sql.NullString
		)
		if err := rows.Scan(&id, &kind, &name, &value); err != nil {
			return nil, err
		}
		m := out[id]
		if kind == migrations.MetaTag {
			m.Tags = append(m.Tags, name)
		} else {
			if m.Values == nil {
				m.Values = map[string]string{}
			}
			m.Values[name] = value.String
		}
		out[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for id, m := range out {
		slices.Sort(m.Tags)
		out[id] = m
	}
	return out, nil
}
