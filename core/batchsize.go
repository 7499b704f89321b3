package core

// The most items one statement of each kind carries. The call sites split
// their work with these, and the catalog renders each statement up to them.

// maxPage bounds a page of UnfiredBarriers and Children.
const maxPage = 10000

// claimMax is the most rows one claim statement takes.
func (s *Store) claimMax() int { return s.claimMaxWith(0) }

// claimMaxWith is claimMax for a claim with the attempt limits of kinds
// kinds, which bind three values each next to the rows' keys.
func (s *Store) claimMaxWith(kinds int) int {
	return min(MaxClaimLimit, s.inListMax(3*kinds))
}

// completionMax is the most completions of one statement: an item binds
// its id in the IN list and, with differing results, an id and a result in
// the CASE, next to the token.
func (s *Store) completionMax() int { return max(1, s.inListMax(2)/3) }

// extendMax is the most leases one statement moves (the lease and the
// token besides the ids).
func (s *Store) extendMax() int { return s.inListMax(2) }

// lostMax is the most claims one read of Lost checks.
func (s *Store) lostMax() int { return s.inListMax(1) }

// keysMax is the most keys one lookup of existing items lists.
func (s *Store) keysMax() int { return s.inListMax(1) }

// releaseMax is the most claims one reaper transaction takes back: three
// binds per claim at most (the IN list and a CASE pair); the history's
// insert binds two more.
func (s *Store) releaseMax() int {
	return max(1, min(reapBatch, s.inListMax(2), (s.caps.MaxBindParams-1)/3))
}

// purgeDeleteMax is the most rows one purge DELETE lists. Where ids bind
// as one list (dialect.UUIDLister), 250: a commit (a WAL flush) per 250
// rows instead of one per 100, four for a pass of the default Limit and
// two for the runtime's passes of 500. The deleted rows are finished
// ones, which no claim or completion locks, so the longer statement holds
// no claim up; a transaction still stays a fraction of a pass.
func (s *Store) purgeDeleteMax() int {
	if s.lister != nil {
		return purgeListBatch
	}
	return min(reapBatch, s.inListMax(1))
}

// purgeListBatch is purgeDeleteMax where ids bind as one list.
const purgeListBatch = 250

// nowSQL reads the database clock.
func (s *Store) nowSQL() string {
	if s.caps.DualTable != "" {
		return qNow + " FROM " + s.caps.DualTable
	}
	return qNow
}

// barrierOpenSQL is the insert-or-ignore of one barrier.
func (s *Store) barrierOpenSQL() string {
	return s.d.InsertIgnore(s.names.Barriers, barrierOpenColumns, s.expand.Replace(barrierOpen), 1, barrierOpenConflict)
}

// queueOpenSQL is the insert-or-ignore of a queue's first row.
func (s *Store) queueOpenSQL() string {
	return s.d.InsertIgnore(s.names.Queues, queueOpenColumns, s.expand.Replace(queueOpen), 1, queueConflict)
}

// scheduleOpenSQL is the insert-or-ignore of a schedule's first row.
func (s *Store) scheduleOpenSQL() string {
	return s.d.InsertIgnore(s.names.Schedules, scheduleOpenColumns, s.expand.Replace(scheduleOpen), 1, scheduleConflict)
}

// storedScheduleOpenSQL is the insert-or-ignore of a stored schedule's
// first row.
func (s *Store) storedScheduleOpenSQL() string {
	return s.d.InsertIgnore(s.names.Schedules, storedScheduleOpenColumns, s.expand.Replace(storedScheduleOpen), 1, scheduleConflict)
}
