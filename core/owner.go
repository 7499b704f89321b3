package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// MaxOwnerNameLen is the longest RegisterOwnerParams.Name, in characters: the
// size of the processes table's name column (schema version 2).
const MaxOwnerNameLen = 255

// RegisterOwnerParams describe a process that claims work.
type RegisterOwnerParams struct {
	// Name is an optional label for the process, for people reading the owners
	// (Owners, the dashboard, inspect), such as a service name; up to
	// MaxOwnerNameLen characters, under ItemSpec.Queue's rules for names. It
	// need not be unique: the owner's identity is its random id. Empty means
	// none.
	Name string
	// Host defaults to os.Hostname(); up to 255 characters, under
	// ItemSpec.Queue's rules for names.
	Host string
	// PID defaults to os.Getpid(). It is for people reading the table: the
	// owner's identity is its random id, never the pid, which the OS reuses.
	PID int
}

// Validate reports, as an *InputError, a Name or Host that RegisterOwner
// would refuse, so that a process can check its settings before it
// connects. Empty values are valid: RegisterOwner fills them in.
func (p RegisterOwnerParams) Validate() error {
	if err := validName("Host", p.Host, 255, false); err != nil {
		return err
	}
	return validName("Name", p.Name, MaxOwnerNameLen, false)
}

// RegisterOwner records a new owner, with a random id per start, and
// returns that id. Claims name it; Heartbeat keeps it alive.
func (s *Store) RegisterOwner(ctx context.Context, p RegisterOwnerParams) (uuid.UUID, error) {
	if p.Host == "" {
		p.Host, _ = os.Hostname()
	}
	if p.PID == 0 {
		p.PID = os.Getpid()
	}
	if err := p.Validate(); err != nil {
		return uuid.Nil, err
	}
	// No name is NULL on every database, as Oracle stores an empty
	// string anyway.
	var name any
	if p.Name != "" {
		name = p.Name
	}
	id := uuid.Must(uuid.NewV7())
	err := s.inTx(ctx, "register owner", func(tx dialect.Tx) error {
		_, err := tx.ExecContext(ctx, s.sql(qOwnerRegister),
			s.d.UUID(id), name, p.Host, p.PID)
		return err
	})
	if err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// Heartbeat tells the store that owner is alive. It writes the owner's
// row and nothing else: whatever the owner holds, it costs one write, and
// it never waits on the row lock of a fence holding one of its claims. It
// does not move any lease: a claim's lease is its handler's deadline, moved
// only by Extend or ExtendMany. Once the owner has been reaped it returns
// ErrOwnerLost: the owner must then stop working on its claims (fences
// would refuse its writes anyway) and register again. Where the dialect
// queues this process's write transactions (SQLite), it goes before the
// others waiting (dialect.TxOptions.Urgent).
func (s *Store) Heartbeat(ctx context.Context, owner uuid.UUID) error {
	if owner == uuid.Nil {
		return invalid("owner", "must be a registered owner")
	}
	// Urgent: where the dialect queues this process's writers (SQLite),
	// the heartbeat goes first, so that a busy process is not taken for
	// dead by a reaper, nor by its own worker's count of late heartbeats.
	return s.inTxWith(ctx, "heartbeat", dialect.TxOptions{Urgent: true}, func(tx dialect.Tx) error {
		// heartbeats always changes, so the row count is 1 for a live
		// owner even where the driver counts changed rows only (MySQL).
		res, err := tx.ExecContext(ctx, s.sql(qOwnerHeartbeat), s.d.UUID(owner))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("plenum: heartbeat %s: %w", owner, ErrOwnerLost)
		}
		return nil
	})
}

// Deregister removes owner on a clean shutdown: its claims go back to
// available at once, without counting a crash or using an attempt, and
// the lanes of its keyed items get a turn. Call it once the owner claims
// no more: a claim of the owner's own that commits while it runs makes
// it run its transaction again, and it gives up after a few such rounds.
func (s *Store) Deregister(ctx context.Context, owner uuid.UUID) error {
	if owner == uuid.Nil {
		return invalid("owner", "must be a registered owner")
	}
	for attempt := 1; ; attempt++ {
		err := s.inTx(ctx, "deregister", func(tx dialect.Tx) error {
			return s.deregister(ctx, tx, owner)
		})
		if !errors.Is(err, errClaimedMeanwhile) || attempt == maxDeregisterRounds {
			return err
		}
	}
}

// errClaimedMeanwhile is deregister's when a claim of the owner's own
// committed between its count of the owner's claims and their hand-back:
// the hand-back took items whose lanes it did not wake, and the
// transaction is run again.
var errClaimedMeanwhile = errors.New("plenum: the owner claimed items while it was deregistered")

// maxDeregisterRounds bounds the transactions of one Deregister.
const maxDeregisterRounds = 5

// deregister hands owner's claims back, wakes their lanes and removes
// the owner, in tx.
func (s *Store) deregister(ctx context.Context, tx dialect.Tx, owner uuid.UUID) error {
	lanes, claimed, err := s.ownerLanes(ctx, tx, owner)
	if err != nil {
		return err
	}
	if err := fault.Hit(ctx, fault.DeregisterAfterCount); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, s.sql(qOwnerReleaseItems), s.d.UUID(owner))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if int(n) != claimed {
		return errClaimedMeanwhile
	}
	if err := s.handBack(ctx, tx, lanes); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.sql(qOwnerDelete), s.d.UUID(owner))
	return err
}

// ownerLanes reads the lanes of owner's claimed items, and counts the
// items.
func (s *Store) ownerLanes(ctx context.Context, q dialect.Querier, owner uuid.UUID) ([]laneRef, int, error) {
	rows, err := q.QueryContext(ctx, s.sql(qOwnerClaimedLanes), s.d.UUID(owner))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var lanes []laneRef
	total := 0
	for rows.Next() {
		var queue string
		var key sql.NullString
		var n int
		if err := rows.Scan(&queue, &key, &n); err != nil {
			return nil, 0, err
		}
		total += n
		if key.String != "" {
			lanes = append(lanes, laneRef{queue: queue, key: key.String})
		}
	}
	return lanes, total, rows.Err()
}
