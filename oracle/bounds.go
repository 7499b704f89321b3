package oracle

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// tcpBounds are the bounds Open puts on the connections of the DSN u
// (sqlkit.DefaultTCPBounds): go-ora alone dials within 60 s and then
// leaves the kernel's keepalive and retransmission defaults, under which
// a call on a connection whose server stopped answering waits about 15
// minutes, or for ever where it waits for a reply with nothing left to
// send. go-ora's own CONNECTION TIMEOUT (or CONNECT TIMEOUT) in the DSN,
// in seconds, sets the connect bound; the others have no name in a
// go-ora DSN. go-ora's TIMEOUT is left to the DSN: it bounds every read,
// a long statement's too, and is no default for a store.
func tcpBounds(u *url.URL) (sqlkit.TCPBounds, error) {
	b := sqlkit.DefaultTCPBounds
	for name, vals := range u.Query() {
		switch strings.ToUpper(name) {
		case "CONNECTION TIMEOUT", "CONNECT TIMEOUT":
			n, err := strconv.Atoi(vals[0])
			if err != nil || n < 0 {
				return b, fmt.Errorf("oracle: open: %s=%q in the DSN: want a whole number of seconds", name, vals[0])
			}
			if n > 0 {
				b.Connect = time.Duration(n) * time.Second
			}
		}
	}
	return b, nil
}

// connector is go-ora's connector of dsn, whose connections are dialed
// with b's bounds.
func connector(dsn string, b sqlkit.TCPBounds) *goora.OracleConnector {
	c := goora.NewConnector(dsn).(*goora.OracleConnector)
	c.Dialer(b.Dialer())
	return c
}
