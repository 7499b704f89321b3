package dialect

import "fmt"

// SkipLockedError is the refusal of a database whose claim does not pass
// over the rows another transaction holds. Some databases parse FOR
// UPDATE SKIP LOCKED and do something else: TiDB runs it as a plain read
// that locks nothing (pingcap/tidb#69720), so two workers take the same
// row; YugabyteDB makes it a lock that waits under SERIALIZABLE
// (yugabyte/yugabyte-db#11761), so claimers queue behind each other. A
// claim built on either hands one item to two workers or stalls them all.
//
// The migrator (migrations.Apply, migrations.Up, core.Options.Migrate) and
// a worker's Start prove, before they go on, that the dialect's Claim in a
// second session passes over a row that a first session's claim holds and
// takes the next one without waiting; where it does not, they return this
// error, saying what was seen. A database of one writer
// (Capabilities.SingleWriter) has no row locks to skip and is not probed.
type SkipLockedError struct {
	// Dialect is the name of the dialect probed.
	Dialect string
	// Seen says what the second session's claim did instead of skipping.
	Seen string
}

// Error says what was seen.
func (e *SkipLockedError) Error() string {
	return fmt.Sprintf("%s: the claim does not skip the rows another session holds, as FOR UPDATE SKIP LOCKED must: %s; Plenum refuses to claim on this database", e.Dialect, e.Seen)
}
