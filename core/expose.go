package core

import (
	"github.com/plenumdb/plenum/internal/storesql"
)

// The packages beside core that read a store's tables (browse) or list its
// statements (internal/catalog) get at what they need of a store through
// internal/storesql: core exposes it here, and exports nothing for them.
func init() {
	storesql.Expose(storesql.StoreOf[*Store, Item, Run, Barrier](exposedStore))
	storesql.Expose(storesql.CoreTemplates[Options, Item, Run, Barrier](catalogTemplates))
}

// exposedStore is s as the browse package reads it; nil for a store Open
// did not return.
func exposedStore(s *Store) *storesql.Store[Item, Run, Barrier] {
	if s == nil || s.handle == nil {
		return nil
	}
	d := s.d
	return &storesql.Store[Item, Run, Barrier]{
		Handle: s.handle,
		LookupName: func(field, v string, max int) error {
			return lookupName(field, v, max, false)
		},
		ValidName: func(field, v string, max int) error {
			return validName(field, v, max, false)
		},
		ItemColumns:    itemColumns,
		RunColumns:     runColumns,
		BarrierColumns: barrierColumns,
		ScanItem:       func(r scanner) (Item, error) { return scanItem(d, r) },
		ScanRun:        func(r scanner) (Run, error) { return scanRun(d, r) },
		ScanBarrier:    func(r scanner) (Barrier, error) { return scanBarrier(d, r) },
	}
}
