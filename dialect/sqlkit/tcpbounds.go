package sqlkit

import (
	"net"
	"strings"
	"syscall"
	"time"
)

// TCPBounds bound how long a call waits on a TCP connection whose peer
// stopped answering without closing it: a half-open connection, as a
// network partition, a cloud load balancer that forgot the flow, or a
// server's host that lost power leaves it. Without them such a call
// waits for the kernel's retransmissions (about 15 minutes on Linux) or,
// when nothing was left to send, for ever.
type TCPBounds struct {
	// Connect bounds a new connection's dial.
	Connect time.Duration
	// KeepAliveIdle is how long a connection may be quiet before the
	// kernel probes the peer; KeepAliveInterval the time between probes.
	KeepAliveIdle, KeepAliveInterval time.Duration
	// KeepAliveCount is how many unanswered probes close the connection
	// where UserTimeout is not supported.
	KeepAliveCount int
	// UserTimeout is how long sent data (a statement, a keepalive probe)
	// may stay unacknowledged before the kernel closes the connection
	// (TCP_USER_TIMEOUT, Linux only; elsewhere the keepalive count
	// applies).
	UserTimeout time.Duration
}

// DefaultTCPBounds are the bounds the server dialects' Open sets where
// the DSN sets none: a connection whose peer stopped answering fails
// within about UserTimeout plus KeepAliveInterval (20 s), whether a
// statement was on its way or the client waited for a reply; a dial
// within Connect (10 s). A statement that runs long on a live server is
// not affected: the server's kernel answers the probes.
var DefaultTCPBounds = TCPBounds{
	Connect:           10 * time.Second,
	KeepAliveIdle:     5 * time.Second,
	KeepAliveInterval: 5 * time.Second,
	KeepAliveCount:    3,
	UserTimeout:       15 * time.Second,
}

// Dialer returns a dialer that applies b to the connections it opens.
func (b TCPBounds) Dialer() *net.Dialer {
	d := &net.Dialer{
		Timeout: b.Connect,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable:   true,
			Idle:     b.KeepAliveIdle,
			Interval: b.KeepAliveInterval,
			Count:    b.KeepAliveCount,
		},
	}
	if b.UserTimeout > 0 {
		ms := int(b.UserTimeout / time.Millisecond)
		d.Control = func(network, address string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil // a Unix socket: no peer to lose
			}
			var soErr error
			if err := c.Control(func(fd uintptr) { soErr = setUserTimeout(fd, ms) }); err != nil {
				return err
			}
			return soErr
		}
	}
	return d
}
