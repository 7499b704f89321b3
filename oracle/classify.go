package oracle

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/sijms/go-ora/v2/network"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/migrations"
)

// Oracle error numbers the dialect tells apart.
const (
	errUniqueViolated = 1     // ORA-00001: unique constraint violated
	errDeadlock       = 60    // ORA-00060: deadlock detected; only the statement was rolled back
	errResourceBusy   = 54    // ORA-00054: resource busy (NOWAIT)
	errWaitTimeout    = 30006 // ORA-30006: resource busy; WAIT timeout expired
	errSerialize      = 8177  // ORA-08177: can't serialize access for this transaction
)

// connectionLost are the Oracle errors that mean the session is gone.
var connectionLost = map[int]bool{
	28:    true, // your session has been killed
	1012:  true, // not logged on
	1033:  true, // initialization or shutdown in progress
	1034:  true, // Oracle not available
	1089:  true, // immediate shutdown in progress
	1092:  true, // instance terminated, disconnection forced
	2396:  true, // exceeded maximum idle time
	3113:  true, // end-of-file on communication channel
	3114:  true, // not connected to Oracle
	3135:  true, // connection lost contact
	12153: true, // TNS: not connected
	12514: true, // TNS: listener does not know of the service
	12528: true, // TNS: listener: all handlers blocking new connections
	12537: true, // TNS: connection closed
	12541: true, // TNS: no listener
	12547: true, // TNS: lost contact
	12570: true, // TNS: packet reader failure
	12571: true, // TNS: packet writer failure
	25408: true, // can not safely replay call
}

// mergeIndexes are the names (in upper case, without the table prefix) of
// the unique indexes the MERGEs of InsertIgnore guard: an ORA-00001 that
// names one of them is a row of a concurrent transaction that committed
// the same key while the MERGE ran.
var mergeIndexes = func() []string {
	var names []string
	for _, m := range migrations.All("") {
		for _, c := range m.Changes {
			if c.Index != nil && c.Index.Unique {
				names = append(names, strings.ToUpper(c.Index.Name))
			}
		}
	}
	return names
}()

// violated finds the constraint an ORA-00001 message names:
// "unique constraint (SCHEMA.NAME) violated".
var violated = regexp.MustCompile(`\(([^()]*)\)`)

// Classify maps Oracle's and the driver's errors:
//
//   - ORA-00060 (deadlock; Oracle rolled back only the statement, and the
//     transaction still holds its locks), ORA-08177 (serialization
//     failure), ORA-00054 and ORA-30006 (a lock not had in time) are
//     Retryable: the core rolls the whole transaction back before it runs
//     it again, which ORA-00060 needs.
//   - ORA-00001 on one of the unique indexes that InsertIgnore's MERGEs
//     guard (the schema's unique indexes, under any table prefix) is
//     Retryable: the MERGE did not see a row a concurrent transaction
//     committed with the same key, and run again it does. ORA-00001 on
//     anything else (a primary key, an index of the application's own) is
//     UniqueViolation.
//   - A session that is gone (ORA-03113, ORA-03135, ORA-00028, the TNS
//     errors, a shutdown, go-ora's bad connection, a network error) is
//     ConnectionLost: at commit, core.ErrCommitUnknown.
//   - Everything else is Other; so is an ended context.
func (d *oraDialect) Classify(err error) dialect.ErrorClass {
	if err == nil {
		return dialect.Other
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return dialect.Other
	}
	var oe *network.OracleError
	if errors.As(err, &oe) {
		switch {
		case oe.ErrCode == errDeadlock, oe.ErrCode == errSerialize, oe.ErrCode == errResourceBusy, oe.ErrCode == errWaitTimeout:
			return dialect.Retryable
		case oe.ErrCode == errUniqueViolated:
			if mergeConflict(oe.ErrMsg) {
				return dialect.Retryable
			}
			return dialect.UniqueViolation
		case connectionLost[oe.ErrCode]:
			return dialect.ConnectionLost
		}
		return dialect.Other
	}
	if sqlkit.IsConnectionLost(err) {
		return dialect.ConnectionLost
	}
	return dialect.Other
}

// mergeConflict reports whether an ORA-00001 message names one of
// mergeIndexes, under any schema and table prefix.
func mergeConflict(msg string) bool {
	m := violated.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	name := strings.ToUpper(m[1])
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Trim(name, `"`)
	for _, ix := range mergeIndexes {
		if strings.HasSuffix(name, ix) {
			return true
		}
	}
	return false
}
