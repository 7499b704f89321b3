package sqlcheck

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
)

// Protocol is a database wire protocol the Recorder reads.
type Protocol int

// The protocols a Recorder reads.
const (
	// PostgreSQL's frontend/backend protocol, version 3 (PostgreSQL and
	// CockroachDB), without TLS.
	PostgreSQL Protocol = iota
	// MySQL's client/server protocol (MySQL and MariaDB), without TLS or
	// compression.
	MySQL
)

// Recorder is a TCP proxy in front of a database server that records the
// text of every statement its clients send: PostgreSQL's simple queries
// and Parse messages, MySQL's COM_QUERY and COM_STMT_PREPARE. It sits
// below every driver, so it records what reaches the server, whoever
// wrote it: the core's statements, the dialect's, the driver's own
// (BEGIN ISOLATION LEVEL ..., SET TRANSACTION ...), and those of sessions
// a dialect opens itself (the cockroach lock's). Clients must connect
// without TLS and compression, whose bytes it cannot read.
type Recorder struct {
	proto  Protocol
	target string
	ln     net.Listener

	mu     sync.Mutex
	stmts  map[string]int
	errs   []error
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// Record starts a Recorder on a local port that forwards every connection
// to target (host:port), reading the client's side as proto.
func Record(target string, proto Protocol) (*Recorder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sqlcheck: record: %w", err)
	}
	r := &Recorder{proto: proto, target: target, ln: ln, stmts: map[string]int{}, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the host:port clients connect to instead of the server's.
func (r *Recorder) Addr() string { return r.ln.Addr().String() }

// Statements returns every distinct statement text recorded so far, with
// how many times each was sent.
func (r *Recorder) Statements() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.stmts))
	for s, n := range r.stmts {
		out[s] = n
	}
	return out
}

// Err returns the protocol errors met (a message the Recorder could not
// read), which would mean statements went unrecorded.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// Close stops accepting, closes every open connection and waits for them.
func (r *Recorder) Close() error {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

func (r *Recorder) accept() {
	defer r.wg.Done()
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.serve(client)
		}()
	}
}

// track adds c to the open connections, or reports false after Close.
func (r *Recorder) track(c net.Conn, add bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if add {
		if r.closed {
			return false
		}
		r.conns[c] = true
	} else {
		delete(r.conns, c)
	}
	return true
}

func (r *Recorder) serve(client net.Conn) {
	defer client.Close()
	if !r.track(client, true) {
		return
	}
	defer r.track(client, false)
	server, err := net.Dial("tcp", r.target)
	if err != nil {
		return // the client sees its connection closed, as from a dead server
	}
	defer server.Close()
	if !r.track(server, true) {
		return
	}
	defer r.track(server, false)

	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(client, server)
		// The server hung up: so does the client's side.
		client.Close()
		close(done)
	}()
	in := bufio.NewReaderSize(client, 64<<10)
	var rerr error
	switch r.proto {
	case PostgreSQL:
		rerr = r.pgStream(in, server)
	case MySQL:
		rerr = r.mysqlStream(in, server)
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed) && !isNetError(rerr) {
		r.fail(rerr)
	}
	server.Close()
	<-done
}

// isNetError reports a connection that broke or was closed: clients and
// servers hang up mid-stream (the suite abandons connections on purpose).
func isNetError(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne)
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *Recorder) add(stmt string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stmts[stmt]++
}

// PostgreSQL startup codes (the int32 after the length of an untyped
// message).
const (
	pgSSLRequest    = 80877103
	pgGSSENCRequest = 80877104
	pgCancelRequest = 80877102
)

// pgStream forwards the client's messages to server, recording the
// queries of 'Q' (simple query) and 'P' (Parse) messages.
func (r *Recorder) pgStream(in *bufio.Reader, server io.Writer) error {
	// Untyped messages come first: an SSL or GSS encryption request (to
	// which the server answers; a client that then starts TLS cannot be
	// read, so clients must ask for none), or a cancel request, then the
	// startup message.
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 || n > 1<<20 {
			return fmt.Errorf("sqlcheck: record: a PostgreSQL startup message of %d bytes", n)
		}
		body := make([]byte, n-8)
		if _, err := io.ReadFull(in, body); err != nil {
			return err
		}
		if _, err := server.Write(append(hdr[:], body...)); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(hdr[4:])
		if code == pgCancelRequest {
			return nil
		}
		if code != pgSSLRequest && code != pgGSSENCRequest {
			break
		}
	}
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		if n < 4 {
			return fmt.Errorf("sqlcheck: record: a PostgreSQL %q message of length %d", hdr[0], n)
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(in, body); err != nil {
			return err
		}
		switch hdr[0] {
		case 'Q': // query\0
			r.add(string(bytes.TrimRight(body, "\x00")))
		case 'P': // statement name\0 query\0 parameter types
			if _, rest, ok := bytes.Cut(body, []byte{0}); ok {
				if q, _, ok := bytes.Cut(rest, []byte{0}); ok {
					r.add(string(q))
				}
			}
		}
		if _, err := server.Write(append(hdr[:], body...)); err != nil {
			return err
		}
	}
}

// MySQL commands whose payload is a statement's text.
const (
	mysqlComQuery       = 0x03
	mysqlComStmtPrepare = 0x16
)

// mysqlStream forwards the client's packets to server, recording the
// text of COM_QUERY and COM_STMT_PREPARE. A command is the payload of a
// packet with sequence number 0 (the handshake's and authentication's
// packets have others), continued by the following packets while they
// are full (16 MiB - 1).
func (r *Recorder) mysqlStream(in *bufio.Reader, server io.Writer) error {
	const full = 1<<24 - 1
	var cmd []byte
	collecting := false
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		body := make([]byte, n)
		if _, err := io.ReadFull(in, body); err != nil {
			return err
		}
		if hdr[3] == 0 {
			cmd, collecting = nil, true
		}
		if collecting {
			cmd = append(cmd, body...)
			if n < full {
				collecting = false
				if len(cmd) > 0 && (cmd[0] == mysqlComQuery || cmd[0] == mysqlComStmtPrepare) {
					r.add(string(cmd[1:]))
				}
				cmd = nil
			}
		}
		if _, err := server.Write(append(hdr[:], body...)); err != nil {
			return err
		}
	}
}

// Sorted returns the keys of a statement count map in order.
func Sorted(stmts map[string]int) []string {
	out := make([]string, 0, len(stmts))
	for s := range stmts {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
