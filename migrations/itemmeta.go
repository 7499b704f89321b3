package migrations

import "github.com/plenumdb/plenum/dialect"

// Bounds of an item's tags and metadata (core.ItemSpec.Tags and
// Metadata), set at enqueue and never changed.
const (
	// MaxTags bounds the tags of one item.
	MaxTags = 16
	// MaxMetadataKeys bounds the metadata keys of one item.
	MaxMetadataKeys = 16
	// MaxTagLen bounds a tag and a metadata key, in characters.
	MaxTagLen = 64
	// MaxMetadataValueLen bounds a metadata value, in bytes: short
	// enough that (name, value, item_id) fits every database's index key
	// (InnoDB's 3,072 bytes at four bytes a character).
	MaxMetadataValueLen = 512
	// MaxMetadataLen bounds one item's tags, keys and values together,
	// in bytes.
	MaxMetadataLen = 4 << 10
)

// The kinds of an item_meta row.
const (
	// MetaTag marks a tag's row: name is the tag, value NULL.
	MetaTag = "t"
	// MetaValue marks a metadata key's row: name is the key, value its
	// value.
	MetaValue = "m"
)

// itemMeta12 is version 12: items' tags and metadata, one row per item
// and tag or key, in a table of their own that no claim or completion
// writes (an index on the items table would be written by each):
//
//   - item_id, kind, name: the item, MetaTag or MetaValue, and the tag or
//     key (the primary key, which is also the path of an item's read and
//     of retention's delete);
//   - value: a key's value; NULL for a tag.
//
// Two indexes serve the filters of the read API, each in item id order
// (newest first, as the lists page) under its equality prefix:
//
//   - item_meta_name (kind, name, item_id): the items with a tag, or with
//     a key whatever its value;
//   - item_meta_value (name, value, item_id): the items whose key holds a
//     value (a tag's NULL value never equals one).
//
// Down drops the table: version 11 has no tags or metadata.
func itemMeta12(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change) Migration {
	return Migration{Version: 12, Name: "item_meta", Changes: []Change{
		{Table: &dialect.Table{
			Name: n.ItemMeta,
			Columns: []dialect.Column{
				{Name: "item_id", Type: dialect.UUID},
				{Name: "kind", Type: dialect.String, Size: 1},
				{Name: "name", Type: dialect.String, Size: MaxTagLen},
				{Name: "value", Type: dialect.String, Size: MaxMetadataValueLen, Nullable: true},
			},
			PrimaryKey: []string{"item_id", "kind", "name"},
		}},
		idx(n.ItemMeta, "item_meta_name", false, []string{"kind", "name", "item_id"}),
		idx(n.ItemMeta, "item_meta_value", false, []string{"name", "value", "item_id"}),
	}}
}
