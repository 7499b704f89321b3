package browse

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/storesql"
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
	// Name is the label the owner registered with (RegisterOwnerParams.Name);
	// empty if none.
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
func (r *Reader) Owners(ctx context.Context, p OwnersParams) ([]OwnerInfo, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	return storesql.Rows(ctx, r.s.Handle, "owners", r.s.SQL(qOwnerPage(r.s.Dialect, limit)), r.scanOwner, r.s.Dialect.UUID(p.After))
}

func (r *Reader) scanOwner(row storesql.Scanner) (OwnerInfo, error) {
	var (
		o                   OwnerInfo
		name, host          sql.NullString
		pid                 int64
		started, beat, now1 = storesql.Time{Dialect: r.s.Dialect}, storesql.Time{Dialect: r.s.Dialect}, storesql.Time{Dialect: r.s.Dialect}
	)
	if err := row.Scan(&o.ID, &name, &host, &pid, &started, &beat, &now1, &o.Claims); err != nil {
		return OwnerInfo{}, err
	}
	o.Name, o.Host, o.PID = name.String, host.String, int(pid)
	o.StartedAt, o.LastHeartbeatAt = started.T, beat.T
	o.HeartbeatAge = now1.T.Sub(beat.T)
	return o, nil
}

// qOwnerPage is one page of n owners in id order, with their names, the
// database's clock (for the heartbeat's age) and the claims each holds,
// counted from the index of claimed items by owner.
func qOwnerPage(d dialect.Dialect, n int) string {
	return "SELECT id, name, host, pid, started_at, last_heartbeat_at, {now}," +
		" (SELECT COUNT(*) FROM {items} i WHERE i.claimed_by = {processes}.id AND i.state = 'claimed')" +
		" FROM {processes} WHERE id > ? ORDER BY id" + d.Limit(n)
}
