package core

import "github.com/google/uuid"

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
