package dialect_test

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

type textBinder struct{ dialect.Dialect }

func (textBinder) Text(s string) any { return []byte(s) }

func TestTextArg(t *testing.T) {
	if v, ok := dialect.TextArg(nil, "x").(string); !ok || v != "x" {
		t.Fatalf("TextArg without a TextBinder = %#v, want the string", dialect.TextArg(nil, "x"))
	}
	if v, ok := dialect.TextArg(textBinder{}, "x").([]byte); !ok || string(v) != "x" {
		t.Fatalf("TextArg of a TextBinder = %#v, want its Text", dialect.TextArg(textBinder{}, "x"))
	}
}
