// Package seal encrypts payloads and results at rest with AES-GCM from
// the standard library, under a Keyring of named keys that rotate
// without downtime.
//
// A sealed value is a JSON object (core stores only JSON payloads and
// results), an envelope:
//
//	{"plenum.sealed":1,"key":"2026-12","nonce":"<base64>","ct":"<base64>"}
//
// "plenum.sealed" is the format version, "key" the id of the key that
// sealed it, "nonce" the 12 random bytes (crypto/rand) of this seal, and
// "ct" the ciphertext with GCM's tag. Readers without a key recognise it
// with Inspect: the dashboard shows "sealed (key id K)" in place of the
// bytes. Every seal binds the value to additional data given by the
// caller (the runtime gives the item's kind and whether it is a payload or
// a result), so a sealed value copied to another kind, or from a payload
// to a result, does not open (ErrTampered).
//
// The runtime takes a Keyring where it takes a codec:
// worker.KindOptions.Codec and worker.KindConfig.Codec for a kind's
// args and results, pipeline.EngineOptions.Codec for a pipeline's data.
// This package imports nothing but the standard library.
package seal
