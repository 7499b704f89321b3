package sqlkit_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

func TestIsConnectionLost(t *testing.T) {
	t.Parallel()
	lost := []error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		fmt.Errorf("wrapped: %w", driver.ErrBadConn), &net.OpError{Op: "read", Err: errors.New("reset")}}
	for _, err := range lost {
		if !sqlkit.IsConnectionLost(err) {
			t.Errorf("IsConnectionLost(%v) = false, want true", err)
		}
	}
	kept := []error{nil, errors.New("syntax error"), context.Canceled, context.DeadlineExceeded, sql.ErrNoRows}
	for _, err := range kept {
		if sqlkit.IsConnectionLost(err) {
			t.Errorf("IsConnectionLost(%v) = true, want false", err)
		}
	}
}
