package seal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/seal"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func ring(t *testing.T, current string, ids ...string) *seal.Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for i, id := range ids {
		keys[id] = key(byte(i + 1))
	}
	r, err := seal.NewKeyring(current, keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSeal_RoundTripNamesItsKey(t *testing.T) {
	t.Parallel()
	r := ring(t, "a", "a")
	env, err := r.Seal([]byte("kind"), []byte(`{"to":"ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte("ada")) {
		t.Fatalf("the envelope shows the plain text: %s", env)
	}
	if id, ok := seal.Inspect(env); !ok || id != "a" {
		t.Fatalf("Inspect = %q, %v; want a, true", id, ok)
	}
	plain, err := r.Open([]byte("kind"), env)
	if err != nil || string(plain) != `{"to":"ada"}` {
		t.Fatalf("Open = %s, %v", plain, err)
	}
	// As PostgreSQL's jsonb gives it back: members sorted, spaced.
	var m map[string]any
	if err := json.Unmarshal(env, &m); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.MarshalIndent(m, " ", " ")
	if id, ok := seal.Inspect(doc); !ok || id != "a" {
		t.Fatalf("Inspect(%s) = %q, %v; want a, true", doc, id, ok)
	}
	if plain, err := r.Open([]byte("kind"), doc); err != nil || string(plain) != `{"to":"ada"}` {
		t.Fatalf("Open(%s) = %s, %v", doc, plain, err)
	}
}

func TestSeal_FreshNonceEachTime(t *testing.T) {
	t.Parallel()
	r := ring(t, "a", "a")
	x, _ := r.Seal(nil, []byte("same"))
	y, _ := r.Seal(nil, []byte("same"))
	if bytes.Equal(x, y) {
		t.Fatalf("two seals of the same value are equal: %s", x)
	}
}

func TestSeal_RotationOpensOldValues(t *testing.T) {
	t.Parallel()
	r := ring(t, "a", "a")
	old, _ := r.Seal(nil, []byte("old"))
	if err := r.Set("b", map[string][]byte{"a": key(1), "b": key(2)}); err != nil {
		t.Fatal(err)
	}
	fresh, _ := r.Seal(nil, []byte("new"))
	if id, _ := seal.Inspect(fresh); id != "b" {
		t.Fatalf("sealed with %q after rotation, want b", id)
	}
	for _, env := range [][]byte{old, fresh} {
		if _, err := r.Open(nil, env); err != nil {
			t.Fatalf("Open(%s): %v", env, err)
		}
	}
	if err := r.Set("b", map[string][]byte{"b": key(2)}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Open(nil, old)
	var ke *seal.KeyError
	if !errors.Is(err, seal.ErrUnknownKey) || !errors.As(err, &ke) || ke.KeyID != "a" {
		t.Fatalf("opening with the key removed: %v, want ErrUnknownKey naming a", err)
	}
}

func TestSeal_TamperingAndContextAreDetected(t *testing.T) {
	t.Parallel()
	r := ring(t, "a", "a", "b")
	env, _ := r.Seal([]byte("payload:email"), []byte(`"secret"`))
	if _, err := r.Open([]byte("payload:sms"), env); !errors.Is(err, seal.ErrTampered) {
		t.Fatalf("opened in another context: %v", err)
	}
	// Change the ciphertext's first base64 digit to another digit, so
	// that it still decodes: flipping a bit of any digit could give a
	// character outside the alphabet ('+' ^ 3 is '('), which fails as
	// not a sealed value instead.
	i := bytes.Index(env, []byte(`"ct":"`)) + len(`"ct":"`)
	bad := bytes.Clone(env)
	bad[i] = 'A'
	if env[i] == 'A' {
		bad[i] = 'B'
	}
	if _, err := r.Open([]byte("payload:email"), bad); !errors.Is(err, seal.ErrTampered) {
		t.Fatalf("opened a changed ciphertext: %v", err)
	}
	// Claim another key of the ring.
	other := bytes.Replace(env, []byte(`"key":"a"`), []byte(`"key":"b"`), 1)
	if _, err := r.Open([]byte("payload:email"), other); !errors.Is(err, seal.ErrTampered) {
		t.Fatalf("opened under another key id: %v", err)
	}
}

func TestSeal_BadInputIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	r := ring(t, "a", "a")
	for _, in := range []string{"", "null", `"x"`, `{"plenum.sealed":1}`, `{"plenum.sealed":2,"key":"a","nonce":"","ct":""}`,
		`{"plenum.sealed":1,"key":"a","nonce":"AAAA","ct":"AAAA"}`, `{"plenum.sealed":1,"key":"a","nonce":"!!","ct":""}`, `{"plenum.sealed":`} {
		if _, err := r.Open(nil, []byte(in)); err == nil {
			t.Errorf("Open(%s) = nil error", in)
		}
	}
	if _, err := new(seal.Keyring).Seal(nil, []byte("x")); !errors.Is(err, seal.ErrNoKey) {
		t.Errorf("the zero ring sealed: %v", err)
	}
	for _, c := range []struct {
		current string
		keys    map[string][]byte
		want    string
	}{
		{"a", map[string][]byte{"a": []byte("short")}, `"a"`},
		{"", map[string][]byte{"": key(1)}, `""`},
		{"a", map[string][]byte{strings.Repeat("x", 65): key(1)}, "64"},
		{"z", map[string][]byte{"a": key(1)}, `"z"`},
	} {
		if err := r.Set(c.current, c.keys); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%q) = %v, want an error naming %s", c.current, err, c.want)
		}
	}
	if r.Current() != "a" {
		t.Errorf("a refused Set changed the ring: current %q", r.Current())
	}
	if _, ok := seal.Inspect([]byte(`{"plenum.sealed":1,`)); ok {
		t.Error("Inspect took a broken envelope")
	}
}
