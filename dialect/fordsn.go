package dialect

import (
	"fmt"
	"slices"
	"strings"
)

// ForDSN returns the registration of the one linked dialect whose DSNs
// have dsn's form: a URL with a scheme of its DSNForm.Schemes, or a DSN
// without a scheme in a form its DSNForm.Recognize knows. It returns an error matching ErrUnknownDialect
// when no linked dialect claims the form (a dialect package that is not
// imported registers nothing), and one naming every candidate when
// several do: name the dialect then (Registered). The errors never repeat
// any part of dsn, which may hold a password.
func ForDSN(dsn string) (Registration, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var found []Registration
	for _, n := range namesLocked() {
		if r := registry[n]; r.DSN.claims(dsn) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Registration{}, fmt.Errorf("%w: no linked dialect has DSNs of this form (linked: %s; import a dialect package, or name the dialect)",
			ErrUnknownDialect, strings.Join(namesLocked(), ", "))
	}
	names := make([]string, len(found))
	for i, r := range found {
		names[i] = r.Dialect.Name()
	}
	return Registration{}, fmt.Errorf("dialect: a DSN of this form fits %s: name the dialect", strings.Join(names, " and "))
}

// claims reports whether dsn has this form: a URL whose scheme is one of
// Schemes, or, for a DSN that is no URL, one Recognize knows.
func (f DSNForm) claims(dsn string) bool {
	s := strings.TrimSpace(dsn)
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		return slices.Contains(f.Schemes, strings.ToLower(scheme))
	}
	return f.Recognize != nil && f.Recognize(s)
}
