package dialect

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Dialect{}
)

// Register makes a dialect available by name to Lookup, so that tools (the
// plenum CLI, the migration generator) can choose one from a flag. Dialect
// packages call it from init, as database/sql drivers do. Registering the
// same name twice panics: it is a programming error in the binary.
func Register(d Dialect) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil {
		panic("dialect: Register of a nil dialect")
	}
	if _, dup := registry[d.Name()]; dup {
		panic("dialect: Register called twice for " + d.Name())
	}
	registry[d.Name()] = d
}

// Lookup returns the registered dialect called name, or an error listing the
// dialects this binary knows.
func Lookup(name string) (Dialect, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if d, ok := registry[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownDialect, name, strings.Join(namesLocked(), ", "))
}

// Names lists the registered dialects, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
