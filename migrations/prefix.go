package migrations

import (
	"errors"
	"fmt"
)

// MaxPrefixLen bounds the table prefix so that every table and index name
// stays within the shortest identifier limit of the supported databases.
const MaxPrefixLen = 20

// ErrInvalidPrefix is returned for a table prefix that is not a safe
// identifier.
var ErrInvalidPrefix = errors.New("invalid table prefix")

// ValidatePrefix checks that prefix is a safe SQL identifier prefix: one to
// MaxPrefixLen characters, lower-case ASCII letters, digits and underscores,
// starting with a letter. Table names are built from it by concatenation, so
// nothing else may pass.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("%w: empty (the default is %q)", ErrInvalidPrefix, DefaultPrefix)
	}
	if len(prefix) > MaxPrefixLen {
		return fmt.Errorf("%w %q: longer than %d characters", ErrInvalidPrefix, prefix, MaxPrefixLen)
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		switch {
		case c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		case c == '_' && i > 0:
		default:
			return fmt.Errorf("%w %q: only a-z, 0-9 and _ are allowed, starting with a letter", ErrInvalidPrefix, prefix)
		}
	}
	return nil
}
