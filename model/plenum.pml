/*
 * Plenum's storage protocol, as the databases run it: a model for SPIN.
 *
 * Each atomic block is one transaction (or one statement) of the core,
 * made atomic because of the row locks it takes before it reads, under
 * READ COMMITTED; the comment on each says which. Where a transaction's
 * statements read rows they do not lock, it is split into several steps,
 * and other processes run between them.
 *
 * Each step names the catalog statements (internal/catalog) it stands
 * for, in a comment of the word catalog, a colon and the names;
 * model_test.go fails if a statement that writes a Plenum table is named
 * by no step. Statements the model leaves out are named one by one at the
 * end (the word outside, a colon, the name, and the reason).
 *
 * The clock is abstracted: the database clock only ever makes a
 * heartbeat stale or a lease expired, and only the owner's heartbeat or
 * an Extend makes them fresh again. The environment (Env) sets those
 * flags at any moment, which includes every timing the real clock allows.
 *
 * Planted bugs, one at a time: -DBUG_NO_TOKEN, -DBUG_HB_LEASE,
 * -DBUG_HANDOVER_EARLY, -DBUG_ARRIVAL_SPLIT, -DBUG_REAP_LIVE,
 * -DBUG_SLOT_EARLY, -DBUG_LANE_NOLOCK, -DBUG_REARM_COUNTS,
 * -DBUG_REVIVE_DONE, -DBUG_SIGNAL_NOLOCK, -DBUG_HANDBACK_NOWAKE (README.md
 * says what each is).
 */

/* Bounds of the bounded model; -D on the command line overrides them. */
#ifndef NW
#define NW 3          /* workers: 3, or 2 for the progress check with faults */
#endif
#if NW != 2 && NW != 3
#error "NW is 2 or 3"
#endif
#ifndef FANOUT
#define FANOUT 2      /* fan-out levels: 2, or 1 (A a plain item, no X2) */
#endif
#if FANOUT != 1 && FANOUT != 2
#error "FANOUT is 1 or 2"
#endif
#ifndef NINC
#define NINC 2        /* owner rows a worker may register in turn */
#endif
#ifndef STALLS
#define STALLS 1      /* heartbeats that go stale */
#endif
#ifndef CRASHES
#define CRASHES 1     /* worker crashes */
#endif
#ifndef SNOOZES
#define SNOOZES 1     /* releases (snooze) */
#endif
#ifndef EXTENDS
#define EXTENDS 1     /* Extends */
#endif
#ifndef HANGS
#define HANGS 1       /* handlers that hang for ever */
#endif
#ifndef FAILS
#define FAILS 1       /* handler failures */
#endif
#ifndef EXPIRES
#define EXPIRES 1     /* leases that expire */
#endif
#ifndef ADMIN
#define ADMIN 1       /* cancels and revives */
#endif
#ifndef AWAITS
#define AWAITS 1      /* first Awaits (Fenced.Await) by C or B2 */
#endif
#ifndef SIGNALS
#define SIGNALS 1     /* signals sent to the run */
#endif
#define MAXATT 2      /* an item's max_attempts */
#define MAXCRASH 2    /* the reaper's MaxCrashes */
#ifndef LIMIT
#define LIMIT 1       /* the lane's max_running: 1, or 2 for a lane taken while it holds a claimed item */
#endif
#if LIMIT != 1 && LIMIT != 2
#error "LIMIT is 1 or 2"
#endif

/* Items: the root R fans out (two pages, completing in its seal's
 * transaction) into X1 = {A, B}; A fans out (one page, completing later,
 * in a transaction of its own) into X2 = {C}; B hands over to B2 with
 * Then; J2 and J1 are the joins of X2 and X1. B, C and B2 share one lane
 * of concurrency limit LIMIT. */
#define R  0
#define A  1
#define B  2
#define C  3
#define B2 4
#define J2 5
#define J1 6
#define NI 7

#define X1 0
#define X2 1
#define NOB 2          /* no barrier */
#define NB 2

/* Item states. */
#define NONE 0         /* not inserted yet */
#define AVAIL 1
#define CLAIMED 2
#define DONE 3
#define DEAD 4
#define CANC 5

#define NOOWNER 255

/* Run states (one run holds every item). */
#define RRUN 0
#define RHALT 1
#define RCANC 2
#define RDONE 3

byte st[NI];           /* items.state */
byte tok[NI];          /* items.claim_token: a claim's generation */
byte own[NI];          /* items.claimed_by */
bool exp[NI];          /* lease_expires_at < now */
byte bar[NI];          /* items.barrier_id */
byte att[NI];          /* items.attempt */
byte cr[NI];           /* items.crash_count */
byte ncomp[NI];        /* ghost: completions */
bool freed[NI];        /* ghost, BUG_SLOT_EARLY: slot given back early */
bool left[NI];         /* ghost: revived by Store.Revive out of a fired barrier */
bool wn[NI];           /* items.wait_name is set (one name in the model) */
bool wd[NI];           /* items.wait_until is set: the wait has a deadline */
bool wdue[NI];         /* wait_until <= now: the deadline has passed */
bool pk[NI];           /* available_at > now: a waiting item, not claimable */
byte nsig;             /* signals rows of the run (one name, distinct keys) */
byte ntk;              /* of those, taken (taken_by set) */

bool bopen[NB];        /* barrier row exists */
byte bexp[NB];         /* expected */
byte barr[NB];         /* arrived */
byte bfail[NB];        /* failed */
bool bseal[NB];        /* sealed */
bool bfired[NB];       /* fired_at IS NOT NULL */
byte bcur[NB];         /* dispatch_cursor: pages dispatched */
byte bpar[NB];         /* parent_barrier_id: where the join reports */
byte nfire[NB];        /* ghost: fires in the barrier's generation */
byte gen[NB];          /* generation: re-arms */

#define NOWN (NW*NINC) /* no owner: a worker that has died for good */
#if NOWN != 4 && NOWN != 6
#error "NW*NINC is 4 or 6"
#endif
bool alive[NOWN + 1];  /* processes row exists */
bool stale[NOWN + 1];  /* last_heartbeat_at < now - StaleAfter */
bool gonestale[NOWN + 1]; /* ghost: the owner was stale when reaped */
byte wo[NW];           /* each worker's current owner */

bool lready;           /* the lane's next_at is set (it has a turn) */
byte llock;            /* the lane row's lock: 0, or worker + 1 */

byte rst;              /* runs.state */
bool canceldone;       /* ghost: CancelRun found nothing left */

byte stalls = STALLS, crashes = CRASHES, snoozes = SNOOZES, extends = EXTENDS;
byte expires = EXPIRES, hangs = HANGS, fails = FAILS, admin = ADMIN;
byte awaits = AWAITS;

#define FINAL(s) ((s) == DONE || (s) == DEAD || (s) == CANC)
#define INLANE(i) ((i) == B || (i) == C || (i) == B2)
#define OWNEXP(i) (st[i] == CLAIMED && own[i] == wo[w] && exp[i])
#define UNEXP(i) (st[i] == CLAIMED && !exp[i])
#define FRESH(w) (alive[wo[w]] && !stale[wo[w]])
#if NW == 3
#define ANYFRESH (FRESH(0) || FRESH(1) || FRESH(2))
#else
#define ANYFRESH (FRESH(0) || FRESH(1))
#endif
/* Some owner row exists; some is stale. */
#if NOWN == 6
#define ANYALIVE (alive[0] || alive[1] || alive[2] || alive[3] || alive[4] || alive[5])
#define ANYSTALE (alive[0] && stale[0] || alive[1] && stale[1] || alive[2] && stale[2] || \
	alive[3] && stale[3] || alive[4] && stale[4] || alive[5] && stale[5])
#else
#define ANYALIVE (alive[0] || alive[1] || alive[2] || alive[3])
#define ANYSTALE (alive[0] && stale[0] || alive[1] && stale[1] || alive[2] && stale[2] || \
	alive[3] && stale[3])
#endif
#define HELD(i, t) (st[i] == CLAIMED && tok[i] == (t))
#define JOIN(b) ((b) == X1 -> J1 : J2)

#ifdef BUG_SLOT_EARLY
#define COUNTED(i) (st[i] == CLAIMED && !freed[i])
#else
#define COUNTED(i) (st[i] == CLAIMED)
#endif
#define LANECLAIMED (COUNTED(B) + COUNTED(C) + COUNTED(B2))
#define LANEREALLY ((st[B] == CLAIMED) + (st[C] == CLAIMED) + (st[B2] == CLAIMED))
#define LANEAVAIL (st[B] == AVAIL || st[C] == AVAIL || st[B2] == AVAIL)
/* A claimed item of the lane handed back (a failure to retry, a release,
 * a parked Await, a clean stop, the reaper) gives the lane a turn in the
 * same transaction (handBack: lanes.ready, which locks the lane row, so
 * that a claim deciding to set the lane idle runs wholly before or
 * after). */
#ifdef BUG_HANDBACK_NOWAKE
#define HANDBACK(i) skip
#else
#define HANDBACK(i) if :: INLANE(i) -> lready = 1 :: else fi
#endif
/* Claimable: available, and due (a waiting item's available_at is its
 * deadline, or MaxDelay ahead, until a signal moves it to now). */
#define AV(i) (st[i] == AVAIL && !pk[i])
/* A waiter left asleep while a signal for it is untaken: a lost wake-up. */
#define ASLEEP (nsig > ntk && (st[C] == AVAIL && pk[C] || st[B2] == AVAIL && pk[B2]))
#define PLAINAVAIL (st[R] == AVAIL || st[A] == AVAIL || st[J2] == AVAIL || st[J1] == AVAIL)

/* Every item inserted has ended, and every barrier has fired, unless its
 * owner ended before sealing it (a fan-out abandoned with its parent). */
#define ITEMSDONE (FINAL(st[R]) && (st[A] == NONE || FINAL(st[A])) && (st[B] == NONE || FINAL(st[B])) && \
	(st[C] == NONE || FINAL(st[C])) && (st[B2] == NONE || FINAL(st[B2])) && \
	(st[J2] == NONE || FINAL(st[J2])) && (st[J1] == NONE || FINAL(st[J1])))
#define BDONE(b, o) (bfired[b] || (!bseal[b] && ENDED(o)))
/* A re-armed barrier has fired again, once, in its new generation. */
#define REFIRED(b) (gen[b] == 0 || nfire[b] == 1)
#define GOAL (ITEMSDONE && BDONE(X1, R) && BDONE(X2, A) && REFIRED(X1) && REFIRED(X2))

/* A barrier fires only when every item under it has ended: X1's members
 * (A, B, B2, the join J2 of A's fan-out, and, below it, C), X2's (C),
 * except an item an operator revived out of a fired barrier with
 * Store.Revive (it left the barrier, which no longer waits for it). */
#define ENDED(i) (st[i] == NONE || FINAL(st[i]))
#define GONE(i) (ENDED(i) || left[i])
#define UNDERDONE(b) ((b) == X2 -> GONE(C) : \
	(GONE(A) && GONE(B) && GONE(B2) && GONE(C) && GONE(J2) && (!bseal[X2] || bpar[X2] != X1 || FINAL(st[J2]))))

/* fire(b): the barrier's conditional update, which only one transaction
 * can make (its row is locked by the update), then its join, inserted in
 * the same transaction: cancelled in a cancelled run, dead when X2 (whose
 * policy is to fail the barrier) counted a failure, else available.
 * catalog: barrier.fire join.insert join.insert-dead join.insert-cancelled */
inline fire(b, up) {
	assert(nfire[b] == 0);
	assert(UNDERDONE(b));
	nfire[b]++;
	bfired[b] = 1;
	/* A new join (after a re-arm, the next generation's, in the place of
	 * the old one, which stays dead or cancelled as history). */
	bar[JOIN(b)] = bpar[b];
	ncomp[JOIN(b)] = 0; att[JOIN(b)] = 0; cr[JOIN(b)] = 0; exp[JOIN(b)] = 0;
	up = 0;
	if
	:: rst == RCANC -> st[JOIN(b)] = CANC; up = 1
	:: rst != RCANC && b == X2 && bfail[b] > 0 -> st[JOIN(b)] = DEAD; up = 1; halt()
	:: else -> st[JOIN(b)] = AVAIL
	fi
}

/* An item of the run dies: the run halts in the same transaction.
 * catalog: run.halt */
inline halt() {
	if
	:: rst == RRUN -> rst = RHALT
	:: else
	fi
}

#define DUE(b) (!bfired[b] && bseal[b] && barr[b] + bfail[b] == bexp[b])

/* tryfire(b), in the caller's transaction: fire when due; a join born
 * dead or cancelled counts as a failure at the barrier above (X2's at X1). */
inline tryfire(b) {
	if
	:: DUE(b) ->
		fire(b, up);
		if
		:: up && bpar[b] != NOB ->
			bfail[bpar[b]]++;
			if
			:: DUE(bpar[b]) -> fire(bpar[b], up)
			:: else
			fi
		:: else
		fi
	:: else
	fi
}

/* settle: a terminal transition counts at the item's barrier in the
 * item's own transaction: the barrier row is locked by its update
 * (after the item rows, in id order) and read back to see whether it is
 * due. catalog: barrier.arrive-due barrier.arrive */
inline settle(i, ok) {
	if
	:: bar[i] != NOB ->
		if
		:: ok -> barr[bar[i]]++
		:: else -> bfail[bar[i]]++
		fi;
		tryfire(bar[i])
	:: else
	fi
}

/* The item ends DONE under the claim: the fenced update (id, token,
 * state), whose row lock is taken before the token is compared.
 * catalog: complete.one-result-returning complete.each-result-returning
 * catalog: complete.one-result complete.each-result
 * The memberless and members forms are the same update, for items of no
 * barrier (their settle counts nowhere) or of the one barrier the claims
 * name (fenced on it too, so that settle counts there), made without the
 * locking read first.
 * catalog: complete.one-result-memberless complete.each-result-memberless
 * catalog: complete.one-result-members complete.each-result-members */
inline completeHeld(i) {
	assert(ncomp[i] == 0);
	ncomp[i]++;
	st[i] = DONE;
	exp[i] = 0
}

/* The claim a worker is about to write under must be its own still. */
#ifdef BUG_NO_TOKEN
#define FENCE(i, t) (st[i] == CLAIMED)
#else
#define FENCE(i, t) HELD(i, t)
#endif
#define WRITEOK(i, t) assert(HELD(i, t))

/* The dialect's claim of one plain item: UPDATE ... WHERE id IN (SELECT
 * ... FOR UPDATE SKIP LOCKED): the row is locked, then its state is
 * checked again on the locked version, so one claim takes it. A row held
 * by another transaction is passed over; here that transaction is either
 * before or after this one. The owner's row is read, not locked (see the
 * worker's two steps). catalog: claim claim.max-attempts */
inline claimOne(i) {
	/* A cancelled run ends with nothing running: nothing of it is
	 * claimed once CancelRun has found nothing left. */
	assert(!(canceldone && rst == RCANC));
	/* A waiting item is claimed only once a signal or its deadline
	 * made it due; a completed one never again (a revived run redoes
	 * no completed step). */
	assert(!pk[i]);
	assert(ncomp[i] == 0);
	st[i] = CLAIMED; tok[i]++; own[i] = o; exp[i] = 0; att[i]++; freed[i] = 0;
	ci = i; mt = tok[i]
}

/* await(i): Fenced.Await in the fence's transaction, which locks the
 * item row (the fence: the token compared), then the run's row
 * (lockRun), then reads the item's wait and the run's untaken signals
 * with a locking read (qSignalsUntaken): every row it reads is locked,
 * and a Signal, which takes the run's row first too, runs wholly before
 * or after it. It takes the oldest untaken signal (signal.take, only
 * while taken_by is NULL) and clears the wait (item.wait-clear); the
 * handler completes in the same fence. Or, its deadline passed on a
 * second Await, it returns TimedOut, the wait cleared, and completes.
 * Or it parks: the item available again at its deadline (or MaxDelay
 * ahead), its attempt given back, the wait's name set: the claim and the
 * lane's slot are given back in this transaction. A second Await of a
 * wait with a deadline keeps the first deadline (await.again).
 * catalog: signal.take item.wait-clear await.deadline await.no-deadline await.again lanes.ready */
inline await(i) {
	if
	:: !wn[i] -> awaits--
	:: else
	fi;
	if
	:: FENCE(i, mt) ->
		WRITEOK(i, mt);
		if
		:: nsig > ntk ->
			ntk++;
			wn[i] = 0; wd[i] = 0; wdue[i] = 0;
			completeHeld(i);
			settle(i, 1)
		:: nsig == ntk && wn[i] && wd[i] && wdue[i] ->
			wn[i] = 0; wd[i] = 0; wdue[i] = 0;
			completeHeld(i);
			settle(i, 1)
		:: else ->
			st[i] = AVAIL; att[i]--; exp[i] = 0; pk[i] = 1; HANDBACK(i);
			if
			:: wn[i] -> skip      /* again: the first deadline kept, or none again */
			:: !wn[i] -> wd[i] = 1; wdue[i] = 0 /* a deadline */
			:: !wn[i] -> wd[i] = 0 /* none: MaxDelay ahead */
			fi;
			wn[i] = 1;
			/* The claim and the slot are given back. */
			assert(LANEREALLY <= LIMIT && st[i] != CLAIMED)
		fi
	:: else
	fi
}

/* Everything a fenced handler may end with, on the item it holds (ci,
 * token mt), each one transaction that locks the item row first
 * (lockClaim: SELECT ... FOR UPDATE, then the token compared). */
inline handle() {
	if
	/* Complete: the item's update, and its arrival at its barrier, in
	 * one transaction. */
	:: atomic {
#ifdef BUG_SLOT_EARLY
		/* The slot given back in a transaction of its own, before the
		 * completion. */
		freed[ci] = 1 };
		atomic {
#endif
		gotone = 0;
		if
		:: FENCE(ci, mt) ->
			WRITEOK(ci, mt);
			completeHeld(ci);
			gotone = 1;
#ifndef BUG_ARRIVAL_SPLIT
			settle(ci, 1);
#endif
			if
			:: ci == J1 && rst == RRUN -> rst = RDONE /* catalog: run.complete */
			:: else
			fi
		:: else
		fi }
#ifdef BUG_ARRIVAL_SPLIT
		/* The arrival in a transaction of its own, after which the
		 * process may die. */
		;
		if
		:: gotone ->
			if
			:: atomic { crashes > 0 -> crashes-- }; goto crash
			:: true
			fi;
			atomic { settle(ci, 1) }
		:: else
		fi
#endif
	/* Fail: dead at its last attempt (counted at its barrier, the run
	 * halted), else available again later, its lane given a turn.
	 * catalog: fail.dead fail.retry lanes.ready */
	:: atomic { fails > 0 -> fails--;
		if
		:: FENCE(ci, mt) ->
			WRITEOK(ci, mt);
			exp[ci] = 0;
			if
			:: att[ci] >= MAXATT -> st[ci] = DEAD; halt(); settle(ci, 0)
			:: else -> st[ci] = AVAIL; HANDBACK(ci)
			fi
		:: else
		fi }
	/* Release (a snooze): available again, the attempt given back, its
	 * lane given a turn. catalog: release lanes.ready */
	:: atomic { snoozes > 0 -> snoozes--;
		if
		:: FENCE(ci, mt) -> WRITEOK(ci, mt); st[ci] = AVAIL; exp[ci] = 0; att[ci]--; HANDBACK(ci)
		:: else
		fi };
		goto again
	/* Extend, then go on: one statement per batch, conditioned on the
	 * token. catalog: extend extend-returning */
	:: atomic { extends > 0 -> extends--;
		if
		:: FENCE(ci, mt) -> WRITEOK(ci, mt); exp[ci] = 0
		:: else
		fi };
		goto work
	/* Await (Fenced.Await) on the run's one signal name, by C or B2:
	 * its first call, or again after a wake or a deadline. */
	:: (ci == C || ci == B2) && (wn[ci] || awaits > 0) ->
		atomic { await(ci) };
		goto again
	/* Crash: the process dies between two transactions. */
	:: atomic { crashes > 0 -> crashes-- }; goto crash
	/* The handler hangs for ever; the owner keeps heartbeating. */
	:: atomic { hangs > 0 -> hangs-- }; goto hung
	fi
}

/* A worker: an owner that claims and handles items. Its heartbeat is the
 * process Heart. */
proctype Worker(byte w) {
	byte o, ci, mt, i, page;
	bool seen, up, gotone;
	byte running;

	o = w * NINC;
	atomic { alive[o] = 1; wo[w] = o } /* catalog: owner.register */
end_idle:
	do
	:: !alive[o] ->
		/* The heartbeat found the owner row gone (ErrOwnerLost): the
		 * worker registers anew, as a new owner. */
		if
		:: o % NINC < NINC - 1 -> atomic { o++; alive[o] = 1; wo[w] = o } /* catalog: owner.register */
		:: else -> goto end_gone
		fi
	/* The claim of plain items: the owner's row is read by the claim's
	 * EXISTS without a lock, so a reaper may remove the owner between
	 * that read and the claim's commit: two steps. */
	:: atomic { alive[o] && PLAINAVAIL -> seen = 1 };
		atomic {
			if
			:: st[R] == AVAIL -> claimOne(R)
			:: st[A] == AVAIL -> claimOne(A)
			:: st[J2] == AVAIL -> claimOne(J2)
			:: st[J1] == AVAIL -> claimOne(J1)
			:: else -> ci = NI
			fi };
		if
		:: ci == NI -> goto again
		:: else -> goto work
		fi
	/* The claim of keyed items, lane by lane (core/laneclaim.go), one
	 * transaction of several statements. Its first takes the lane's row
	 * with the dialect's claim (FOR UPDATE SKIP LOCKED; the filter counts
	 * claimed items without a lock, only to pass over full lanes); from
	 * then on no other claim of the lane's items can run until this one
	 * commits, so the count in its next statement is exact. Where the
	 * dialect can, the lane's row is only locked (lanes.lock, a read with
	 * FOR UPDATE SKIP LOCKED), and the write at the end sets its turn.
	 * A claim of keys without limits (core/keyclaim.go) claims their
	 * items as the queue's own claim does, with no lane and no count;
	 * the keys with limits it meets go this way, their lanes taken by
	 * key (lanes.claim-keys, lanes.lock-keys).
	 * catalog: lanes.claim lanes.claim-keys */
	:: atomic { alive[o] && lready && LANECLAIMED < LIMIT &&
#ifdef BUG_LANE_NOLOCK
		1 -> running = LANECLAIMED
#else
		llock == 0 -> llock = w + 1
#endif
		};
		/* The lane's claimed items counted under its lock (qLaneCounts),
		 * its first available ones read, and those chosen claimed
		 * (claim.chosen: the item rows locked, their state checked
		 * again), or, where no lane of the claim has a rate limit, its
		 * first available ones, up to its room, claimed in the
		 * statement that finds them (claim.lanes, the same locks and
		 * checks): the statements read items they do not lock, but no
		 * item of the lane becomes claimed meanwhile (every such claim
		 * holds the lane's row), and one that stops being claimed only
		 * leaves more room. catalog: claim.chosen claim.chosen.max-attempts claim.lanes claim.keys */
		atomic {
#ifndef BUG_LANE_NOLOCK
			running = LANECLAIMED;
#endif
			gotone = 0;
			if
			:: running < LIMIT && st[B] == AVAIL -> claimOne(B); gotone = 1
			:: running < LIMIT && AV(C) -> claimOne(C); gotone = 1
			:: running < LIMIT && AV(B2) -> claimOne(B2); gotone = 1
			:: else -> ci = NI
			fi;
			assert(LANEREALLY <= LIMIT)
		};
		/* A lane that ran dry, its items claimed or not, is set idle
		 * (lanes.served with no turn) if a read of its first available
		 * item finds none; a lane may also keep its turn (it gave what
		 * the claim asked of it). Whatever gives the lane work, a
		 * hand-back too, locks the lane row, and so runs wholly before
		 * the read or after the commit: one step. lanes.taken is the
		 * same write for a lane only locked: it sets served_at too.
		 * catalog: lanes.served lanes.taken */
		atomic {
			if
			:: !LANEAVAIL -> lready = 0
			:: true
			fi;
			llock = 0 };
		if
		:: ci == NI -> goto again
		:: else -> goto work
		fi
	/* A clean stop and start (Deregister, then Register): the owner's
	 * claims go back and its row goes, in one transaction; it holds none
	 * here, between handlers; their lanes are given a turn.
	 * catalog: owner.release-items lanes.ready owner.delete */
	:: atomic { alive[o] && o % NINC < NINC - 1 && crashes > 0 ->
		crashes--;
			i = 0;
			do
			:: i < NI -> if :: st[i] == CLAIMED && own[i] == o -> st[i] = AVAIL; att[i]--; HANDBACK(i) :: else fi; i++
			:: else -> break
			od;
			alive[o] = 0; o++; alive[o] = 1; wo[w] = o } /* catalog: owner.register */
	od;

work:
	if
#if FANOUT == 2
	:: ci == R || ci == A -> goto expand
#else
	/* One level: A ends like B2, with handle(); C, J2 and X2 never
	 * exist. */
	:: ci == R -> goto expand
#endif
	:: ci == B -> goto then
	:: else -> handle()
	fi;
	goto again;

	/* Expand (core/expand.go): fences of their own, one per page, each
	 * resumed from the barrier's cursor after a crash and a new claim.
	 * R: two pages, its seal and its completion in the last one's
	 * transaction (CompleteParent). A: one page, sealed, its completion
	 * in a later transaction. */
expand:
	/* OpenBarrier, get-or-create on (owner, name), under the fence (the
	 * item row locked first). catalog: barrier.open */
	atomic {
		if
		:: FENCE(ci, mt) ->
			WRITEOK(ci, mt);
			if
			:: ci == R && !bopen[X1] -> bopen[X1] = 1; bpar[X1] = NOB
			:: ci == A && !bopen[X2] -> bopen[X2] = 1; bpar[X2] = NOB
			:: else
			fi
		:: else -> ci = NI
		fi };
	if
	:: ci == NI -> goto again
	:: else
	fi;
	if
	:: atomic { crashes > 0 -> crashes-- }; goto crash
	:: true
	fi;
	page = 0;
	do
	:: ci == R ->
		/* One page of AddChildren: the barrier row locked
		 * (qBarrierLockDispatch) after the item's, the cursor compared,
		 * children inserted or ignored on their keys, expected grown by
		 * the rows really inserted; the lane given a turn in the same
		 * transaction (lanes.open, lanes.ready). On the last page, Seal:
		 * R has no barrier of its own (parent none), seals, tries to
		 * fire, and completes.
		 * catalog: enqueue.now enqueue.later enqueue.now-keyed enqueue.later-keyed
		 * catalog: barrier.dispatched lanes.open lanes.ready barrier.seal */
		atomic {
			if
			:: FENCE(ci, mt) && bcur[X1] == 0 ->
				WRITEOK(ci, mt);
				st[A] = AVAIL; bar[A] = X1; bexp[X1]++; bcur[X1] = 1
			:: FENCE(ci, mt) && bcur[X1] == 1 ->
				WRITEOK(ci, mt);
				st[B] = AVAIL; bar[B] = X1; bexp[X1]++; bcur[X1] = 2; lready = 1;
				bseal[X1] = 1; bpar[X1] = NOB;
				tryfire(X1);
				completeHeld(R)
			:: else -> ci = NI
			fi };
		if
		:: ci == NI || st[R] == DONE -> break
		:: else
		fi;
		if
		:: atomic { crashes > 0 -> crashes-- }; goto crash
		:: true
		fi
	:: ci == A ->
		/* A's only page and its Seal, not completing: its own barrier
		 * X1 expects one more arrival, X2's join (qBarrierExpectOne,
		 * only while X1 has not fired); A stays a member of X1.
		 * catalog: barrier.expect-one */
		atomic {
			if
			:: FENCE(ci, mt) && !bseal[X2] ->
				WRITEOK(ci, mt);
				if
				:: bcur[X2] == 0 -> st[C] = AVAIL; bar[C] = X2; bexp[X2]++; bcur[X2] = 1; lready = 1
				:: else
				fi;
				bseal[X2] = 1;
				if
				:: bar[A] == X1 && !bfired[X1] ->
					bexp[X1]++; bpar[X2] = X1;
#ifdef BUG_HANDOVER_EARLY
					/* The handover made at the seal, though A does not
					 * complete in this transaction. */
					bar[A] = NOB; bexp[X1]--;
#endif
					skip
				:: else -> bpar[X2] = NOB
				fi;
				tryfire(X2);
				/* Or Fenced.Seal then Fenced.Complete in this same fence:
				 * the handover. A leaves X1 and gives back the expected
				 * count it held there (X2's join holds one now), then
				 * completes, counting nowhere, and X1 is tried.
				 * catalog: barrier.hand-over */
				if
				:: bar[A] == X1 && bpar[X2] == X1 ->
					bar[A] = NOB; bexp[X1]--;
					completeHeld(A);
					tryfire(X1)
				:: true
				fi
			:: FENCE(ci, mt) && bseal[X2] -> skip
			:: else -> ci = NI
			fi };
		if
		:: ci == NI -> goto again
		:: else
		fi;
		if
		:: atomic { crashes > 0 -> crashes-- }; goto crash
		:: true
		fi;
		/* A's own completion, later, counts at X1. */
		if
		:: st[A] == DONE && ncomp[A] == 1 && tok[A] == mt -> skip
		:: else -> handle()
		fi;
		break
	od;
	goto again;

	/* Then: B completes and B2 takes its place at X1 in one fence: B
	 * leaves the barrier, completes (counting nowhere), and B2 is
	 * inserted as X1's member, expected unchanged, its lane given a turn.
	 * catalog: item.leave-barrier */
then:
	atomic {
		if
		:: FENCE(ci, mt) ->
			WRITEOK(ci, mt);
			st[B2] = AVAIL; bar[B2] = bar[B]; bar[B] = NOB; lready = 1;
			completeHeld(B)
		:: else
		fi };
	goto again;

crash:
	/* The process is gone, and its heartbeat with it: its owner row
	 * stays until the reaper finds it stale. It restarts as a new owner
	 * if it may. */
	atomic {
		stale[o] = 1;
		if
		:: o % NINC < NINC - 1 -> o++; alive[o] = 1; wo[w] = o /* catalog: owner.register */
		:: else -> wo[w] = NOWN
		fi };
	if
	:: wo[w] == NOWN -> goto end_gone
	:: else
	fi;
again:
	/* Locals cleared, so that states differ by what matters only. */
	atomic { ci = 0; mt = 0; i = 0; page = 0; seen = 0; up = 0; gotone = 0; running = 0 };
	goto end_idle;

hung:
	/* Its lease runs out some time (the clock does not stop for a hung
	 * handler); the owner keeps heartbeating (Heart). */
	atomic { if :: st[ci] == CLAIMED && tok[ci] == mt -> exp[ci] = 1 :: else fi };
end_hung:
	false;
end_gone:
	skip
}

/* The heartbeat: one write of the owner's row only (moving no lease),
 * which waits for no fence. catalog: owner.heartbeat */
proctype Heart(byte w) {
	byte i;
end:
	do
	:: atomic { alive[wo[w]] && stale[wo[w]] -> stale[wo[w]] = 0 }
#ifdef BUG_HB_LEASE
	/* The heartbeat moves its owner's leases: it beats whenever one of
	 * them has expired, and the lease is new again. */
	:: atomic { alive[wo[w]] && (OWNEXP(0) || OWNEXP(1) || OWNEXP(2) || OWNEXP(3) || OWNEXP(4) || OWNEXP(5) || OWNEXP(6)) ->
		stale[wo[w]] = 0;
		i = 0;
		do
		:: i < NI -> if :: OWNEXP(i) -> exp[i] = 0 :: else fi; i++
		:: else -> break
		od;
		i = 0 }
#endif
	od
}

/* The reaper, at any moment. Its passes are transactions of their own:
 * the owners removed, then the claims read, then each batch locked, read
 * again and released. */
proctype Reaper() {
	byte i, t, o, up;
end:
	do
	/* Stale owners removed: DELETE ... WHERE last_heartbeat_at < now -
	 * StaleAfter; each row locked by the delete, which re-evaluates the
	 * condition on it. An owner removed never comes back.
	 * catalog: reap.owners */
	:: atomic {
#ifdef BUG_REAP_LIVE
		/* The reaper removes an owner without checking it is stale. */
		ANYALIVE ->
		if
		:: alive[0] -> o = 0 :: alive[1] -> o = 1 :: alive[2] -> o = 2
		:: alive[3] -> o = 3
#if NOWN == 6
		:: alive[4] -> o = 4 :: alive[5] -> o = 5
#endif
		fi;
		gonestale[o] = stale[o]; alive[o] = 0
#else
		ANYSTALE ->
		o = 0;
		do
		:: o < NW * NINC -> if :: alive[o] && stale[o] -> gonestale[o] = 1; alive[o] = 0 :: else fi; o++
		:: else -> break
		od
#endif
		; o = 0 }
	/* Orphans: claims read (without locks) whose owner row is gone; then,
	 * in a transaction of its own, each row locked (qReapLock, FOR
	 * UPDATE) and kept only if it still holds the token read: back to
	 * available, a crash counted, or dead at MaxCrashes, counted at its
	 * barrier in the same transaction.
	 * catalog: reap.crash-retry reap.crash-dead lanes.ready */
	:: atomic {
		if
		:: st[R] == CLAIMED && !alive[own[R]] -> i = R
		:: st[A] == CLAIMED && !alive[own[A]] -> i = A
		:: st[B] == CLAIMED && !alive[own[B]] -> i = B
		:: st[C] == CLAIMED && !alive[own[C]] -> i = C
		:: st[B2] == CLAIMED && !alive[own[B2]] -> i = B2
		:: st[J2] == CLAIMED && !alive[own[J2]] -> i = J2
		:: st[J1] == CLAIMED && !alive[own[J1]] -> i = J1
		fi;
		t = tok[i] };
		atomic {
			if
			:: HELD(i, t) ->
				assert(gonestale[own[i]]);
				exp[i] = 0;
				if
				:: cr[i] + 1 >= MAXCRASH -> cr[i]++; st[i] = DEAD; halt(); settle(i, 0)
				:: else -> cr[i]++; st[i] = AVAIL; att[i]--; HANDBACK(i)
				fi
			:: else
			fi;
			i = 0; t = 0; up = 0 }
	/* Timeouts: expired leases of live owners read, then each locked and
	 * kept only if it still holds the token and its lease is still
	 * expired (an Extend since saves it): an attempt used, or dead at
	 * max_attempts; a lane handed an item back given a turn.
	 * catalog: reap.timeout-retry reap.timeout-dead lanes.ready */
	:: atomic {
		if
		:: st[R] == CLAIMED && exp[R] && alive[own[R]] -> i = R
		:: st[A] == CLAIMED && exp[A] && alive[own[A]] -> i = A
		:: st[B] == CLAIMED && exp[B] && alive[own[B]] -> i = B
		:: st[C] == CLAIMED && exp[C] && alive[own[C]] -> i = C
		:: st[B2] == CLAIMED && exp[B2] && alive[own[B2]] -> i = B2
		:: st[J2] == CLAIMED && exp[J2] && alive[own[J2]] -> i = J2
		:: st[J1] == CLAIMED && exp[J1] && alive[own[J1]] -> i = J1
		fi;
		t = tok[i] };
		atomic {
			if
			:: HELD(i, t) && exp[i] ->
				exp[i] = 0;
				if
				:: att[i] >= MAXATT -> st[i] = DEAD; halt(); settle(i, 0)
				:: else -> st[i] = AVAIL; HANDBACK(i)
				fi
			:: else
			fi;
			i = 0; t = 0; up = 0 }
	od
}

/* The database clock, abstracted: a heartbeat goes stale (the owner
 * stalls past StaleAfter), or a lease expires, at any moment. */
proctype Env() {
	byte o, i;
	bool wc, wb2;
end:
	do
	/* Signal: the run's row locked (lockRun) before anything is read, so
	 * that an Await, which locks it too, runs wholly before or after;
	 * refused for a finished run. The signal inserted (once per key), the
	 * run's waiters read (available items waiting on the name), made due
	 * (available_at = now, only while still available and waiting) and
	 * their lanes given a turn now.
	 * catalog: signal.open signal.wake lanes.wake-item */
#ifdef BUG_SIGNAL_NOLOCK
	/* The waiters read without the run's lock, before the signal's
	 * insert commits: an Await in between sees no signal and parks. */
	:: atomic { nsig < SIGNALS && rst != RCANC && rst != RDONE ->
		wc = (st[C] == AVAIL && wn[C]); wb2 = (st[B2] == AVAIL && wn[B2]) };
		atomic {
			nsig++;
			if :: wc && st[C] == AVAIL && wn[C] -> pk[C] = 0; lready = 1 :: else fi;
			if :: wb2 && st[B2] == AVAIL && wn[B2] -> pk[B2] = 0; lready = 1 :: else fi;
			wc = 0; wb2 = 0;
			assert(!ASLEEP) }
#else
	:: atomic { nsig < SIGNALS && rst != RCANC && rst != RDONE ->
		nsig++;
		if :: st[C] == AVAIL && wn[C] -> assert(lready); pk[C] = 0; lready = 1 :: else fi;
		if :: st[B2] == AVAIL && wn[B2] -> assert(lready); pk[B2] = 0; lready = 1 :: else fi;
		assert(!ASLEEP) }
#endif
	/* A wait's deadline passes: the item, if it waits, is due. A wait
	 * with no deadline is due only MaxDelay ahead, taken here as never
	 * (were it due, its handler would Await again and find any signal). */
	:: atomic { wn[C] && wd[C] && !wdue[C] -> wdue[C] = 1; pk[C] = 0 }
	:: atomic { wn[B2] && wd[B2] && !wdue[B2] -> wdue[B2] = 1; pk[B2] = 0 }
	:: atomic { stalls > 0 && ANYFRESH ->
		if
		:: alive[wo[0]] && !stale[wo[0]] -> stale[wo[0]] = 1; stalls--
		:: alive[wo[1]] && !stale[wo[1]] -> stale[wo[1]] = 1; stalls--
#if NW == 3
		:: alive[wo[2]] && !stale[wo[2]] -> stale[wo[2]] = 1; stalls--
#endif
		fi }
	:: atomic { expires > 0 && (UNEXP(R) || UNEXP(A) || UNEXP(B) || UNEXP(C) || UNEXP(B2) || UNEXP(J2) || UNEXP(J1)) ->
		expires--;
		if
		:: st[R] == CLAIMED && !exp[R] -> exp[R] = 1
		:: st[A] == CLAIMED && !exp[A] -> exp[A] = 1
		:: st[B] == CLAIMED && !exp[B] -> exp[B] = 1
		:: st[C] == CLAIMED && !exp[C] -> exp[C] = 1
		:: st[B2] == CLAIMED && !exp[B2] -> exp[B2] = 1
		:: st[J2] == CLAIMED && !exp[J2] -> exp[J2] = 1
		:: st[J1] == CLAIMED && !exp[J1] -> exp[J1] = 1
		fi }
	od
}

/* The re-arm of barrier b may be made: it fired, its join is dead or
 * cancelled, the run is not finished, and if its join counted at a
 * barrier above that fired too (X2's join at X1), that one may be
 * re-armed as well. */
#define RUNOPEN (rst == RRUN || rst == RHALT)
#define JGONE(b) (st[JOIN(b)] == DEAD || st[JOIN(b)] == CANC)
#define REARMOK(b) (bfired[b] && JGONE(b) && RUNOPEN && \
	(bar[JOIN(b)] == NOB || !bfired[bar[JOIN(b)]] || (bar[JOIN(b)] == X1 && JGONE(X1) && bar[J1] == NOB)))

/* rearmOne(b, leaving): b's dead and cancelled children available again
 * now (revive.children), its failures less those and the leaving joins',
 * unfired, its generation grown (barrier.rearm), and tried. */
inline rearmOne(b, leaving) {
	n = 0; k = 0;
	do
	:: k < NI ->
		if
#ifdef BUG_REVIVE_DONE
		/* The revive of the children misses its state filter: completed
		 * children run again. */
		:: bar[k] == b && (st[k] == DEAD || st[k] == CANC || st[k] == DONE) ->
#else
		:: bar[k] == b && (st[k] == DEAD || st[k] == CANC) ->
#endif
			st[k] = AVAIL; att[k] = 0; cr[k] = 0; exp[k] = 0; pk[k] = 0; n++;
			if :: INLANE(k) -> lready = 1 :: else fi
		:: else
		fi;
		k++
	:: else -> break
	od;
#ifdef BUG_REARM_COUNTS
	/* The re-arm does not take back the revived children's failures. */
	bfail[b] = bfail[b] - leaving;
#else
	bfail[b] = bfail[b] - n - leaving;
#endif
	bfired[b] = 0; nfire[b] = 0; gen[b]++;
	n = 0; k = 0;
	tryfire(b)
}

/* rearm(x): the old join leaves the barrier above, then x is re-armed. */
inline rearm(x) {
	ab = bar[JOIN(x)];
	if
	:: ab != NOB ->
		bar[JOIN(x)] = NOB;
		if
		:: !bfired[ab] -> bfail[ab]--
		:: else -> rearmOne(ab, 1)
		fi
	:: else
	fi;
	ab = 0;
	rearmOne(x, 0)
}

/* An operator: cancels an item or the run, revives a dead item or the
 * run, ADMIN times in all. */
proctype Admin() {
	byte i, up, n, k, ab;
end:
	do
	/* Cancel of an item: its row locked (qItemLock), cancelled if not
	 * ended (a holder loses its claim), counted as a failure at its
	 * barrier. catalog: item.cancel */
	:: atomic { admin > 0 && rst != RCANC ->
		admin--;
		if
		:: st[A] == AVAIL || st[A] == CLAIMED -> i = A
		:: st[C] == AVAIL || st[C] == CLAIMED -> i = C
		:: st[B2] == AVAIL || st[B2] == CLAIMED -> i = B2
		:: else -> i = NI
		fi;
		if
		:: i != NI -> st[i] = CANC; exp[i] = 0; settle(i, 0)
		:: else
		fi }
	/* CancelRun: the run's row locked and set cancelled first, so that
	 * nothing its items do later undoes it; then pages of its unfinished
	 * items, each page's rows locked and cancelled, counted at their
	 * barriers, until a page finds none.
	 * catalog: run.cancel run.cancel-items */
	:: atomic { admin > 0 && (rst == RRUN || rst == RHALT) -> admin--; rst = RCANC };
		do
		:: atomic {
			if
			:: st[R] == AVAIL || st[R] == CLAIMED -> i = R
			:: st[A] == AVAIL || st[A] == CLAIMED -> i = A
			:: st[B] == AVAIL || st[B] == CLAIMED -> i = B
			:: st[C] == AVAIL || st[C] == CLAIMED -> i = C
			:: st[B2] == AVAIL || st[B2] == CLAIMED -> i = B2
			:: st[J2] == AVAIL || st[J2] == CLAIMED -> i = J2
			:: st[J1] == AVAIL || st[J1] == CLAIMED -> i = J1
			:: else -> i = NI
			fi;
			if
			:: i != NI -> st[i] = CANC; exp[i] = 0; settle(i, 0)
			:: else -> canceldone = 1
			fi }
			if
			:: canceldone -> break
			:: else
			fi
		od
	/* Revive of a dead item (Store.Revive, ReviveRunItem, ReviveRun):
	 * its row locked, then its barrier's (the order every completion
	 * takes); the failure it counted there taken back while the barrier
	 * has not fired (barrier.unfail is conditioned on fired_at IS NULL);
	 * available again now with its attempts reset, its lane given a turn
	 * (found by an update that locks it, opened if retention deleted it).
	 * ReviveRunItem and ReviveRun bring the run back to running in the
	 * same transaction; Store.Revive leaves the run as it is. A dead item
	 * whose barrier fired leaves it under Store.Revive; under ReviveRun
	 * and ReviveRunItem it re-arms the barrier instead (the re-arm step
	 * below), as does a dead join whose barrier counted failures.
	 * catalog: item.revive barrier.unfail lanes.ready lanes.open run.resume */
	:: atomic { admin > 0 && RUNOPEN &&
		(st[R] == DEAD || st[A] == DEAD || st[B] == DEAD || st[C] == DEAD || st[B2] == DEAD || st[J2] == DEAD || st[J1] == DEAD) ->
		admin--;
		if
		:: st[R] == DEAD -> i = R
		:: st[A] == DEAD -> i = A
		:: st[B] == DEAD -> i = B
		:: st[C] == DEAD -> i = C
		:: st[B2] == DEAD -> i = B2
		:: st[J2] == DEAD -> i = J2
		:: st[J1] == DEAD -> i = J1
		fi;
		up = 0;
		if
		:: bar[i] != NOB && bfired[bar[i]] -> bar[i] = NOB; left[i] = 1 /* Store.Revive: it leaves the fired barrier */
		:: bar[i] != NOB && !bfired[bar[i]] -> bfail[bar[i]]--; up = 1
		:: bar[i] == NOB -> up = 1
		fi;
		st[i] = AVAIL; att[i] = 0; cr[i] = 0; exp[i] = 0; pk[i] = 0;
		if
		:: INLANE(i) -> lready = 1
		:: else
		fi;
		/* ReviveRunItem or ReviveRun (which re-arm instead where the
		 * barrier fired, or the join's barrier counted failures), or
		 * Store.Revive. */
		if
		:: up && !(i == J2 && bfail[X2] > 0) && !(i == J1 && bfail[X1] > 0) -> rst = RRUN
		:: true
		fi;
		i = 0; up = 0 }
	/* Re-arm of a fired barrier (ReviveBarrier; ReviveRun and
	 * ReviveRunItem for a dead item whose barrier fired, or a dead join
	 * whose barrier counted failures): one transaction. The barrier's row
	 * locked first (qReviveLockBarrier), then the run's (refused when
	 * finished), then the old join's item row (refused unless dead or
	 * cancelled); the old join leaves the barrier above (X1, for X2's
	 * join), taking back the failure it counted there while that has not
	 * fired, else that barrier is re-armed the same way first, the old
	 * join's failure taken back with its own children's; the dead and
	 * cancelled children revived (an update that locks each row and reads
	 * its state again; a fired barrier's children are all ended, and only
	 * a revive, which takes the barrier's lock first too, changes an ended
	 * child), their lanes given a turn; the barrier unfired, its failures
	 * taken back, its generation grown; then tried, as an arrival would.
	 * Every row it reads it has locked first, so under READ COMMITTED it
	 * is one atomic step (a revive that locked a child first and waits for
	 * the barrier deadlocks with it; the database aborts one, which runs
	 * again whole). ReviveRun and ReviveRunItem also resume the run.
	 * catalog: barrier.rearm revive.children item.leave-barrier barrier.unfail lanes.ready lanes.open run.resume */
	:: atomic { admin > 0 && (REARMOK(X2) || REARMOK(X1)) ->
		admin--;
		if
		:: REARMOK(X2) -> i = X2
		:: REARMOK(X1) -> i = X1
		fi;
		rearm(i);
		if
		:: rst == RHALT -> rst = RRUN /* ReviveRun, ReviveRunItem */
		:: true                     /* ReviveBarrier */
		fi;
		i = 0; up = 0 }
	od
}

/* Checked when nothing can move any more: no item is lost and every
 * barrier has fired. */
proctype Final() {
	timeout -> assert(GOAL)
}

init {
	atomic {
		/* The run and its first item. catalog: run.open */
		rst = RRUN;
		st[R] = AVAIL; bar[R] = NOB; bar[A] = NOB; bar[B] = NOB; bar[C] = NOB;
		bar[B2] = NOB; bar[J2] = NOB; bar[J1] = NOB;
		bpar[X1] = NOB; bpar[X2] = NOB;
		wo[0] = 0; wo[1] = NINC;
#if NW == 3
		wo[2] = 2 * NINC;
#endif
		run Reaper();
		run Env();
		run Admin();
		run Final();
		run Worker(0); run Heart(0);
		run Worker(1); run Heart(1)
#if NW == 3
		; run Worker(2); run Heart(2)
#endif
	}
}

#ifdef PROGRESS
/* Progress: with weak fairness and finitely many crashes, every item
 * ends and every barrier fires. */
ltl progress { <> GOAL }
#endif

/*
 * Statements that write Plenum tables and are not modelled, each named
 * with its reason (model_test.go requires one line per statement):
 *
 * outside: attempts.insert -- the attempts table is history read by no transition
 * outside: attempts.orphaned -- retention of that history
 * outside: meta.insert -- items' tags and metadata are data written once with their item, in the enqueue's transaction, and read by no transition
 * outside: meta.orphaned -- retention of that data, deleted with its item
 * outside: runcontext.open -- a run's context is data written inside a fence, under the fence's token check and the run's row lock, checked by the pipeline suite
 * outside: runcontext.set -- a run's context is data written inside a fence, like runcontext.open
 * outside: progress.open -- an item's progress is data no transition reads, written under the fence's token check on the item's row, checked by the conformance suite
 * outside: progress.set -- an item's progress is data no transition reads, like progress.open
 * outside: progress.orphaned -- retention of an item's progress, with its item, like attempts.orphaned
 * outside: enqueue.release-key -- a finished item's unique key moved aside for a new enqueue; keys are not modelled
 * outside: limit.queue-set -- the model's lane limit is fixed
 * outside: limit.queue-clear -- the model's lane limit is fixed
 * outside: limit.lane-set -- the model's lane limit is fixed
 * outside: limit.lane-clear -- the model's lane limit is fixed
 * outside: queue.open -- queues rows only hold limits and pauses
 * outside: queue.set-paused -- pausing only withholds claims, which the model's workers may do anyway
 * outside: schedule.open -- periodic ticks: their own compare-and-set, checked by the conformance suite
 * outside: schedule.advance -- periodic ticks: their own compare-and-set
 * outside: schedule.stored-open -- schedules kept in the database: the same compare-and-set on the watermark and revision, checked by the conformance suite
 * outside: schedule.stored-advance -- schedules kept in the database: a tick's compare-and-set
 * outside: schedule.stored-set -- schedules kept in the database: an operator's change, compared on revision and watermark
 * outside: schedule.stored-pause -- schedules kept in the database: an operator's change
 * outside: schedule.stored-delete -- schedules kept in the database: an operator's change
 * outside: purge.items.delete -- retention deletes finished rows of finished runs only
 * outside: purge.items.one-statement -- retention deletes finished rows of finished runs only
 * outside: purge.barriers.delete -- retention deletes fired barriers of finished runs only
 * outside: purge.lanes.delete -- retention deletes a lane idle past its age with no available or claimed item; the model's lane is never idle that long, and what gives a lane work finds its row by an update that locks it (conformance: Flow_LanePurgedWhileGivenALimitKeepsIt)
 * outside: purge.lanes-left.delete -- retention deletes a lane whose turn and last write are older than its age with no available or claimed item (a claim of keys without limits leaves turns behind), as purge.lanes.delete does an idle one
 * outside: probe.insert -- the skip-locked probe writes rows of its own queue, which no worker claims
 * outside: probe.claim -- the skip-locked probe's own rows
 * outside: probe.delete -- the skip-locked probe's own rows
 * outside: probe.delete-leftover -- the skip-locked probe's own rows
 */
