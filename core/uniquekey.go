package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Uniqueness by state and per period (ItemSpec.KeyStates, KeyPeriod). Both
// keep the one unique index on (queue, unique_key): a period is a suffix of
// the stored key, and a key held by an item outside the wanted states is
// released by rewriting the holder's key into a form no caller's key can
// take (ReleasedKey).

// Statements.
const (
	// qKeyRelease rewrites a holder's key, only while it still holds that
	// key in the state it was read in: a holder that changed meanwhile is
	// read again.
	qKeyRelease = "UPDATE {items} SET unique_key = ? WHERE id = ? AND unique_key = ? AND state = ?"
	// qTickHolder reads the item of a schedule's tick (ScheduleSpec.SkipWhile).
	qTickHolder = "SELECT state, finished_at FROM {items} WHERE queue = ? AND unique_key = ?"
)

// MinKeyPeriod is the shortest ItemSpec.KeyPeriod: far above every
// dialect's clock resolution.
const MinKeyPeriod = time.Second

// periodKeyTimeFormat is fixed-width, so that a period's key is the same
// text whichever process makes it.
const periodKeyTimeFormat = "2006-01-02T15:04:05.000000Z"

// periodKeySuffixLen is the length of what PeriodKey appends to a key.
const periodKeySuffixLen = 1 + len(periodKeyTimeFormat)

// maxKeyRounds bounds how often one spec's key is released and its row
// inserted again in one call: each round means another transaction made,
// finished or released the key's holder meanwhile, so that a call under
// an isolation level that does not see such commits (a caller's
// REPEATABLE READ transaction given to EnqueueTx) fails instead of
// looping.
const maxKeyRounds = 16

// PeriodKey returns the key stored for an item enqueued with Key key and
// KeyPeriod period at t (on the database clock): the key, "@", and the
// start of the period that holds t in UTC with microseconds
// ("report@2026-12-06T06:00:00.000000Z"). Periods are aligned to the Unix
// epoch: an hour's periods start on the hour, a day's at midnight UTC.
// The key of a period is an ordinary key: Item.Key shows it, and an
// enqueue without KeyPeriod that gives the same text finds the same item.
func PeriodKey(key string, period time.Duration, t time.Time) string {
	p := period.Microseconds()
	if p <= 0 {
		return key
	}
	start := floorDiv(t.UnixMicro(), p) * p
	return key + "@" + time.UnixMicro(start).UTC().Format(periodKeyTimeFormat)
}

// validKeyOptions checks a spec's KeyStates and KeyPeriod.
func validKeyOptions(sp *ItemSpec, at string) error {
	if sp.KeyStates != nil {
		if sp.Key == "" {
			return invalid(at+"KeyStates", "set without a Key")
		}
		if len(sp.KeyStates) == 0 {
			return invalid(at+"KeyStates", "empty: give the states in which the key is held, or nil to hold it while the item exists")
		}
		for _, st := range sp.KeyStates {
			if !knownState(st) {
				return invalid(at+"KeyStates", "%q is not an item state", st)
			}
		}
	}
	if sp.KeyPeriod != 0 {
		if sp.Key == "" {
			return invalid(at+"KeyPeriod", "set without a Key")
		}
		if sp.KeyPeriod < MinKeyPeriod || sp.KeyPeriod > MaxDelay {
			return invalid(at+"KeyPeriod", "%v is outside [%v, %v]", sp.KeyPeriod, MinKeyPeriod, MaxDelay)
		}
		if sp.KeyPeriod%time.Microsecond != 0 {
			return invalid(at+"KeyPeriod", "%v is not a whole number of microseconds", sp.KeyPeriod)
		}
	}
	// The key as stored at its longest: with its period, once released.
	n := utf8.RuneCountInString(sp.Key)
	if sp.KeyPeriod != 0 {
		n += periodKeySuffixLen
	}
	if sp.KeyStates != nil {
		n += releasedKeySuffixLen
	}
	if n > migrations.MaxStoredKeyLen {
		return invalid(at+"Key", "stored with KeyPeriod's and ReleasedKey's suffixes it is %d characters, over the limit of %d", n, migrations.MaxStoredKeyLen)
	}
	return nil
}

// knownState reports whether st is one of an item's states.
func knownState(st State) bool {
	switch st {
	case StateAvailable, StateClaimed, StateCompleted, StateDead, StateCancelled:
		return true
	}
	return false
}

// periodKeys returns specs with the keys of those that have a KeyPeriod
// replaced by their period's key (PeriodKey), on the database clock read
// once through q; specs itself when none has one.
func (s *Store) periodKeys(ctx context.Context, q dialect.Querier, specs []ItemSpec) ([]ItemSpec, error) {
	if !slices.ContainsFunc(specs, func(sp ItemSpec) bool { return sp.KeyPeriod != 0 }) {
		return specs, nil
	}
	now := timeValue{d: s.d}
	if err := q.QueryRowContext(ctx, s.sql(s.nowSQL())).Scan(&now); err != nil {
		return nil, err
	}
	out := slices.Clone(specs)
	for i := range out {
		if out[i].KeyPeriod != 0 {
			out[i].Key = PeriodKey(out[i].Key, out[i].KeyPeriod, now.t)
			out[i].KeyPeriod = 0
		}
	}
	return out, nil
}

// ReleasedKey returns the key an item keeps once an enqueue with
// ItemSpec.KeyStates released key from it: the key, the control character
// U+0001 and the item's id in unpadded base64url (22 characters). No
// caller's key can take it (keys are refused with control characters),
// the id keeps it unique, and it fits migrations.MaxStoredKeyLen with any
// key, KeyPeriod's suffix included.
//
// The form sorts right after the key itself, byte for byte: on InnoDB the
// enqueues that wait for the key hold a gap lock request on the gap before
// the key's entry, and a released key written into that gap (as one that
// began with the id would be) would deadlock with each of them.
func ReleasedKey(holder uuid.UUID, key string) string {
	return key + releasedKeySep + base64.RawURLEncoding.EncodeToString(holder[:])
}

// releasedKeySep separates a released key from its holder's id, and
// releasedKeySuffixLen is what ReleasedKey appends.
const (
	releasedKeySep       = "\x01"
	releasedKeySuffixLen = 1 + 22
)

// releasable reports whether a holder in state st keeps sp's key from sp:
// false when sp holds keys only in KeyStates and st is not one of them.
func releasable(sp *ItemSpec, st State) bool {
	return sp.KeyStates != nil && st != "" && !slices.Contains(sp.KeyStates, st)
}

// releaseKeys takes, for one statement's rows (in key order) as
// resolveExisting found them, the keys that no live item holds: a holder
// outside the spec's KeyStates has its key released, in key order (the
// order in which the statement locked the keys, so that two enqueues of
// the same keys do not deadlock), and a key whose holder has gone since
// the statement (retention, or another release) is free. It returns the
// rows to insert again.
func (s *Store) releaseKeys(ctx context.Context, q dialect.Querier, batch []ItemSpec, existing []EnqueueResult, states []State, keyScope string) ([]int, error) {
	var again []int
	for i := range batch {
		sp := &batch[i]
		switch {
		case sp.Key == "":
			continue
		case states[i] == "":
			again = append(again, i) // nothing holds the key any more
			continue
		case !existing[i].Existed || !releasable(sp, states[i]):
			continue
		}
		key := keyScope + sp.Key
		_, err := q.ExecContext(ctx, s.sql(qKeyRelease), ReleasedKey(existing[i].ID, key), s.d.UUID(existing[i].ID), key, string(states[i]))
		if err != nil {
			return nil, err
		}
		// Whether or not this statement changed the holder, the key was
		// free or changed hands: insert again and read what holds it.
		again = append(again, i)
	}
	return again, nil
}

// keyRounds counts the rounds of each spec (by its place in the caller's
// slice) in insertItems.
type keyRounds map[int]int

// next counts one more round of spec j and refuses one past maxKeyRounds.
func (r keyRounds) next(j int, sp *ItemSpec) error {
	r[j]++
	if r[j] > maxKeyRounds {
		return fmt.Errorf("plenum: key %q of queue %q changed hands %d times during one enqueue: is the transaction above READ COMMITTED?", sp.Key, sp.Queue, maxKeyRounds)
	}
	return nil
}
