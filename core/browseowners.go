package core

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
)

// OwnersParams page through the registered owners.
type OwnersParams struct {
	// After is the id of the last owner of the previous page; uuid.Nil
	// for the first page.
	After uuid.UUID
	// Limit is the page size: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
}

// OwnerInfo is a registered owner (a process that claims work) as the
// store sees it.
type OwnerInfo struct {
	ID uuid.UUID
	// Name is reserved for a name the owner registers with; the store
	// keeps none yet, so it is empty.
	Name string
	Host string
	PID  int
	// StartedAt and LastHeartbeatAt are on the database clock.
	StartedAt       time.Time
	LastHeartbeatAt time.Time
	// HeartbeatAge is how long ago the last heartbeat was, on the
	// database clock (never on this process's).
	HeartbeatAge time.Duration
	// Claims counts the items the owner holds claimed.
	Claims int64
}

// Owners lists the registered owners in id order (registration order: ids
// are UUIDv7), one keyset page at a time, each with the age of its
// heartbeat on the database clock and the number of claims it holds.
func (s *Store) Owners(ctx context.Context, p OwnersParams) ([]OwnerInfo, error) {
	limit, err := listLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	return readRows(ctx, s, "owners", s.sql(qOwnersPage(s.d, limit)), s.scanOwner, s.d.UUID(p.After))
}

func (s *Store) scanOwner(r scanner) (OwnerInfo, error) {
	var (
		o                   OwnerInfo
		host                sql.NullString
		pid                 int64
		started, beat, now1 = timeValue{d: s.d}, timeValue{d: s.d}, timeValue{d: s.d}
	)
	if err := r.Scan(&o.ID, &host, &pid, &started, &beat, &now1, &o.Claims); err != nil {
		return OwnerInfo{}, err
	}
	o.Host, o.PID = host.String, int(pid)
	o.StartedAt, o.LastHeartbeatAt = started.t, beat.t
	o.HeartbeatAge = now1.t.Sub(beat.t)
	return o, nil
}
