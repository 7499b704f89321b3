package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Version is the format of the envelopes this package writes: the value
// of an envelope's "plenum.sealed" member. Open refuses other versions.
const Version = 1

// Errors of Open and Seal; test for them with errors.Is.
var (
	// ErrNotSealed: the value is not a sealed envelope (plain JSON, or
	// not JSON at all).
	ErrNotSealed = errors.New("plenum/seal: not a sealed value")
	// ErrUnknownKey: the envelope names a key id the keyring does not
	// hold (a key removed from the ring while items sealed with it were
	// still stored). Retrying cannot help: add the key back to open them.
	ErrUnknownKey = errors.New("plenum/seal: unknown key id")
	// ErrTampered: the key is known but the envelope does not open: its
	// ciphertext, nonce or key id was changed, or it was sealed for
	// another context (another kind's or pipeline's payload, a payload
	// moved to a result).
	ErrTampered = errors.New("plenum/seal: sealed value does not open (tampered with, or sealed for another context)")
	// ErrNoKey: the keyring has no current key to seal with.
	ErrNoKey = errors.New("plenum/seal: the keyring has no current key")
)

// KeyError is an error about one key id, wrapping ErrUnknownKey,
// ErrTampered or the reason a key was refused.
type KeyError struct {
	KeyID string
	Err   error
}

func (e *KeyError) Error() string { return fmt.Sprintf("key id %q: %v", e.KeyID, e.Err) }
func (e *KeyError) Unwrap() error { return e.Err }

// envelope is a sealed value as stored: a JSON object whose
// "plenum.sealed" member is the format version, so that readers without
// a key (the dashboard, the read API) recognise it. Nonce and CT are
// standard base64 (encoding/json's for []byte).
type envelope struct {
	Sealed int    `json:"plenum.sealed"`
	Key    string `json:"key"`
	Nonce  []byte `json:"nonce"`
	CT     []byte `json:"ct"`
}

// marker is the member that makes a JSON object an envelope: Inspect
// looks for it before decoding anything. (Seal writes it first, but a
// database that stores JSON as a document, PostgreSQL's jsonb, gives the
// members back in its own order and spacing.)
var marker = []byte(`"plenum.sealed"`)

// Inspect reports whether b is a sealed envelope, and the id of the key
// that sealed it, without any key: what a reader shows in place of the
// bytes ("sealed (key id K)"). It never fails: anything that is not an
// envelope is (false).
func Inspect(b []byte) (keyID string, sealed bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || !bytes.Contains(b, marker) {
		return "", false
	}
	var env envelope
	if json.Unmarshal(b, &env) != nil || env.Sealed == 0 || env.Key == "" || len(env.Nonce) == 0 || len(env.CT) == 0 {
		return "", false
	}
	return env.Key, true
}

// MaxKeyIDLen bounds a key id, which every envelope carries in clear.
const MaxKeyIDLen = 64

// Keyring holds the keys that seal and open values: one current key,
// which seals, and any number of others, kept to open the values they
// sealed, by key id. Rotation without downtime: add the new key to every
// process's ring (Set with the old key still current), then make it
// current; values sealed with the old key keep opening for as long as
// the old key stays in the ring, and once none is stored any more (all
// finished and removed by retention), drop it.
//
// A Keyring is safe for concurrent use, and Set replaces its keys at
// once while it is in use. The zero value holds no key: it opens
// nothing and Seal returns ErrNoKey.
type Keyring struct {
	mu      sync.RWMutex
	current string
	keys    map[string]cipher.AEAD
}

// NewKeyring returns a keyring holding keys (by key id), sealing with
// the key whose id is current; see Set.
func NewKeyring(current string, keys map[string][]byte) (*Keyring, error) {
	r := &Keyring{}
	if err := r.Set(current, keys); err != nil {
		return nil, err
	}
	return r, nil
}

// Set replaces the ring's keys with keys, by key id, and makes current
// the key that seals. Each key is an AES key of 16, 24 or 32 bytes (AES-
// 128, 192 or 256 in GCM mode; 32 is the one to choose); a key id is 1 to
// 64 characters and names the key in every value it seals, in clear.
// current must be one of keys; an empty current makes a ring that only
// opens. An error names the key id and changes nothing.
func (r *Keyring) Set(current string, keys map[string][]byte) error {
	aeads := make(map[string]cipher.AEAD, len(keys))
	for id, k := range keys {
		if id == "" || len(id) > MaxKeyIDLen {
			return &KeyError{KeyID: id, Err: fmt.Errorf("a key id is 1 to %d characters", MaxKeyIDLen)}
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return &KeyError{KeyID: id, Err: fmt.Errorf("want a key of 16, 24 or 32 bytes: %w", err)}
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return &KeyError{KeyID: id, Err: err}
		}
		aeads[id] = aead
	}
	if current != "" && aeads[current] == nil {
		return &KeyError{KeyID: current, Err: fmt.Errorf("the current key is not among the %d keys given", len(keys))}
	}
	r.mu.Lock()
	r.current, r.keys = current, aeads
	r.mu.Unlock()
	return nil
}

// Current returns the id of the key that seals ("" for none).
func (r *Keyring) Current() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.current
}

// Seal encrypts plain with the current key, bound to aad (additional
// data that is authenticated but not stored: the context the value
// belongs to, which Open must be given again), under a fresh random
// nonce, and returns the envelope: a JSON object that names the key id
// and carries the nonce and the ciphertext in base64.
func (r *Keyring) Seal(aad, plain []byte) ([]byte, error) {
	r.mu.RLock()
	id, aead := r.current, r.keys[r.current]
	r.mu.RUnlock()
	if aead == nil {
		return nil, ErrNoKey
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("plenum/seal: nonce: %w", err)
	}
	return json.Marshal(envelope{Sealed: Version, Key: id, Nonce: nonce, CT: aead.Seal(nil, nonce, plain, aad)})
}

// Open decrypts the envelope sealed, which must have been sealed with
// the same aad, with the key its key id names. Errors: ErrNotSealed for
// a value that is not an envelope, ErrUnknownKey (in a *KeyError) for a
// key id the ring does not hold, ErrTampered (in a *KeyError) for an
// envelope that does not open. Open never panics on bad input.
func (r *Keyring) Open(aad, sealed []byte) ([]byte, error) {
	var env envelope
	if _, ok := Inspect(sealed); !ok || json.Unmarshal(sealed, &env) != nil {
		return nil, ErrNotSealed
	}
	if env.Sealed != Version {
		return nil, fmt.Errorf("%w: envelope version %d, want %d", ErrNotSealed, env.Sealed, Version)
	}
	r.mu.RLock()
	aead := r.keys[env.Key]
	r.mu.RUnlock()
	if aead == nil {
		return nil, &KeyError{KeyID: env.Key, Err: ErrUnknownKey}
	}
	if len(env.Nonce) != aead.NonceSize() {
		return nil, &KeyError{KeyID: env.Key, Err: ErrTampered}
	}
	plain, err := aead.Open(nil, env.Nonce, env.CT, aad)
	if err != nil {
		return nil, &KeyError{KeyID: env.Key, Err: ErrTampered}
	}
	return plain, nil
}
