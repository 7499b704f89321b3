package dialect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// A DSN form claimed by two dialects is not guessed at: ForDSN names both,
// and a form no dialect claims is ErrUnknownDialect. An alias finds its
// dialect, and cannot be taken twice.
func TestForDSN_AmbiguousAndUnknownFormsAreRefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fordsn-test-a", "fordsn-test-b"} {
		dialect.Register(dialect.Registration{Dialect: renamedTo{name: name}, Open: openNothing,
			DSN: dialect.DSNForm{Example: "fordsntest://x", Schemes: []string{"fordsntest"}}})
	}
	dialect.Register(dialect.Registration{Dialect: renamedTo{name: "fordsn-test-c"}, Open: openNothing, Aliases: []string{"fordsn-test-alias"},
		DSN: dialect.DSNForm{Example: "c:x", Recognize: func(dsn string) bool { return strings.HasPrefix(dsn, "fordsn-c:") }}})

	_, err := dialect.ForDSN("FordsnTest://user:secret@host/db")
	if err == nil || !strings.Contains(err.Error(), "fordsn-test-a and fordsn-test-b") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ForDSN of a form two dialects claim = %v, want both named and nothing of the DSN", err)
	}
	if _, err := dialect.ForDSN("nobody://user:secret@host/db"); !errors.Is(err, dialect.ErrUnknownDialect) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("ForDSN of an unclaimed scheme = %v, want ErrUnknownDialect without the DSN", err)
	}
	r, err := dialect.ForDSN(" fordsn-c:whatever")
	if err != nil || r.Dialect.Name() != "fordsn-test-c" {
		t.Fatalf("ForDSN of a recognized form = %v, %v", r.Dialect, err)
	}
	// Recognize is asked about DSNs that are no URL only.
	if _, err := dialect.ForDSN("other://fordsn-c:x"); !errors.Is(err, dialect.ErrUnknownDialect) {
		t.Fatalf("ForDSN of a URL of another scheme = %v, want ErrUnknownDialect", err)
	}
	if r, err := dialect.Registered("fordsn-test-alias"); err != nil || r.Dialect.Name() != "fordsn-test-c" {
		t.Fatalf("Registered(alias) = %v, %v", r.Dialect, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration of a taken alias did not panic")
		}
	}()
	dialect.Register(dialect.Registration{Dialect: renamedTo{name: "fordsn-test-d"}, Open: openNothing, Aliases: []string{"fordsn-test-alias"},
		DSN: dialect.DSNForm{Example: "d"}})
}
