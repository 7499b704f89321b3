package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
)

func TestOwnerParams_Validate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     core.RegisterOwnerParams
		field string // "" when valid
	}{
		{"empty", core.RegisterOwnerParams{}, ""},
		{"longest name", core.RegisterOwnerParams{Name: strings.Repeat("é", core.MaxOwnerNameLen)}, ""},
		{"name too long", core.RegisterOwnerParams{Name: strings.Repeat("é", core.MaxOwnerNameLen+1)}, "Name"},
		{"name with NUL", core.RegisterOwnerParams{Name: "a\x00b"}, "Name"},
		{"name not UTF-8", core.RegisterOwnerParams{Name: "\xff"}, "Name"},
		{"host too long", core.RegisterOwnerParams{Host: strings.Repeat("h", 256)}, "Host"},
		{"host not UTF-8", core.RegisterOwnerParams{Host: "\xfe"}, "Host"},
	} {
		err := tc.p.Validate()
		var ie *core.InputError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", tc.name, err)
		case tc.field != "" && !errors.As(err, &ie):
			t.Errorf("%s: Validate = %v, want an *InputError", tc.name, err)
		case tc.field != "" && (ie.Field != tc.field || !errors.Is(err, core.ErrInvalidInput)):
			t.Errorf("%s: Validate = %v, want field %s and ErrInvalidInput", tc.name, err, tc.field)
		}
	}
}
