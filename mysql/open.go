package mysql

import (
	"context"
	"errors"
	"fmt"

	gomysql "github.com/go-sql-driver/mysql"
)

// connectError says why Open's ping failed, telling apart what a user
// fixes differently: credentials or a database the server refused, a
// server that never sent MySQL's greeting (another database's port: a
// PostgreSQL server waits for the client to speak first, so the driver
// waits until the timeout), and a server that could not be reached. where
// names the server without the password.
func connectError(where string, err error) error {
	var me *gomysql.MySQLError
	switch {
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1698 || me.Number == 1044):
		return fmt.Errorf("mysql: open %s: the server refused the credentials: check the user and password in the DSN: %w", where, err)
	case errors.As(err, &me) && me.Number == 1049:
		return fmt.Errorf("mysql: open %s: the server has no such database: check the database name in the DSN: %w", where, err)
	case errors.As(err, &me):
		return fmt.Errorf("mysql: open %s: the server refused the connection: %w", where, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("mysql: open %s: no MySQL greeting from the server within %v: is the port another database's (PostgreSQL's 5432, say), or are packets dropped on the way? %w", where, openPingTimeout, err)
	}
	return fmt.Errorf("mysql: open %s: cannot reach the server: %w", where, err)
}
