package oracle

import (
	"context"
	"database/sql"
	"errors"

	"github.com/plenumdb/plenum/dialect"
)

// setReadCommitted is the first statement of every transaction Begin
// starts.
const setReadCommitted = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"

// Begin starts a transaction at READ COMMITTED. go-ora's BeginTx takes
// neither an isolation level nor a read-only flag (it refuses both), so
// Begin begins with the default options and makes SET TRANSACTION
// ISOLATION LEVEL READ COMMITTED the transaction's first statement: a
// session altered to SERIALIZABLE would otherwise fail claims with
// ORA-08177. opts.ReadOnly is not passed on; a read-only transaction
// begins like any other.
func (d *oraDialect) Begin(ctx context.Context, db *sql.DB, _ dialect.TxOptions) (dialect.Tx, error) {
	if db == nil {
		return nil, errors.New("oracle: begin: nil *sql.DB")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		// Not tx itself: a nil *sql.Tx in a Tx interface is not nil.
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, setReadCommitted); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return tx, nil
}
