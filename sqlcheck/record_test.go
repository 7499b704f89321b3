package sqlcheck

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// sink is a server that reads and keeps everything a client sends, and
// answers nothing.
func sink(t *testing.T) (addr string, got func() []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	data := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			data <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		data <- b
	}()
	return ln.Addr().String(), func() []byte {
		select {
		case b := <-data:
			return b
		case <-time.After(10 * time.Second):
			t.Fatal("the sink got nothing")
			return nil
		}
	}
}

// send connects to r, writes msgs, and waits for the server to have them.
func send(t *testing.T, r *Recorder, got func() []byte, msgs ...[]byte) {
	t.Helper()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Join(msgs, nil)
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	if b := got(); !bytes.Equal(b, want) {
		t.Fatalf("the server got %d bytes, the client sent %d: the recorder changed the stream", len(b), len(want))
	}
	c.Close()
}

func pgMsg(typ byte, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)+4))
	return append(out, b...)
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// The recorder passes PostgreSQL's stream through unchanged and records
// simple queries and Parse messages, not the startup message, passwords
// or binds.
func TestRecorder_PostgreSQLRecordsQueriesAndParses(t *testing.T) {
	t.Parallel()
	addr, got := sink(t)
	r, err := Record(addr, PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	startup := []byte{0, 0, 0, 0, 0, 3, 0, 0}
	startup = append(startup, bytes.Join([][]byte{cstr("user"), cstr("SELECT 'not a query'"), {0}}, nil)...)
	binary.BigEndian.PutUint32(startup, uint32(len(startup)))
	send(t, r, got,
		startup,
		pgMsg('p', cstr("secret")),
		pgMsg('Q', cstr("SELECT 1")),
		pgMsg('P', cstr("stmt1"), cstr("SELECT $1::int"), []byte{0, 0}),
		pgMsg('B', cstr(""), cstr("stmt1"), []byte{0, 0, 0, 0, 0, 0}),
		pgMsg('P', cstr(""), cstr("SELECT 1"), []byte{0, 0}),
		pgMsg('X'),
	)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	stmts := r.Statements()
	if len(stmts) != 2 || stmts["SELECT 1"] != 2 || stmts["SELECT $1::int"] != 1 {
		t.Fatalf("recorded %v, want SELECT 1 twice and SELECT $1::int once", stmts)
	}
}

func mysqlPacket(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// The recorder passes MySQL's stream through unchanged and records
// COM_QUERY and COM_STMT_PREPARE (sequence 0), a statement split over
// packets of 16 MiB - 1 whole, and neither the handshake response nor
// other commands.
func TestRecorder_MySQLRecordsQueriesAndPrepares(t *testing.T) {
	t.Parallel()
	addr, got := sink(t)
	r, err := Record(addr, MySQL)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const full = 1<<24 - 1
	long := "SELECT '" + strings.Repeat("x", full) + "'"
	first := append([]byte{mysqlComQuery}, long[:full-1]...)
	send(t, r, got,
		mysqlPacket(1, append([]byte{0x03, 0xa2, 0, 0}, "root\x00"...)), // handshake response, whose first byte is 0x03
		mysqlPacket(3, []byte{0x03, 'x'}),                               // an auth switch response
		mysqlPacket(0, append([]byte{mysqlComQuery}, "SET time_zone = '+00:00'"...)),
		mysqlPacket(0, append([]byte{mysqlComStmtPrepare}, "SELECT ? FROM dual"...)),
		mysqlPacket(0, []byte{0x17, 1, 0, 0, 0}), // COM_STMT_EXECUTE
		mysqlPacket(0, first),
		mysqlPacket(1, []byte(long[full-1:])),
		mysqlPacket(0, []byte{0x0e}), // COM_PING
	)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	stmts := r.Statements()
	if len(stmts) != 3 || stmts["SET time_zone = '+00:00'"] != 1 || stmts["SELECT ? FROM dual"] != 1 || stmts[long] != 1 {
		var keys []string
		for k := range stmts {
			keys = append(keys, k[:min(len(k), 40)])
		}
		t.Fatalf("recorded %d statements (%q), want the SET, the prepared SELECT and the long SELECT", len(stmts), keys)
	}
}
