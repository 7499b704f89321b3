package core

import (
	"errors"

	"github.com/google/uuid"
)

// ErrKeyConflict means a child of a barrier could not be added because the
// row that holds its stored key (the barrier's id, a slash, the child's
// key) in its queue is not a child of that barrier. Callers cannot make
// such rows (keys of that form are refused at enqueue); one can only come
// from outside the store, or from before the form was reserved. Nothing
// of the batch was added.
var ErrKeyConflict = errors.New("plenum: child key held by another item")

// reservedKey reports whether key has the form reserved for the stored keys
// of a barrier's children: a UUID in its 36-character text form (any case),
// then a slash. Children's and callers' keys share one unique index per
// queue; refusing this form from callers keeps the two apart.
func reservedKey(key string) bool {
	if len(key) < 37 || key[36] != '/' {
		return false
	}
	_, err := uuid.Parse(key[:36])
	return err == nil
}
