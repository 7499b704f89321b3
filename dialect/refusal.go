package dialect

import (
	"errors"
	"net"
)

// Refusal says why a database refused to do the work asked of it at all:
// not an answer about the work (a unique index, a lost race, a wrong
// result) but the server or the network turning the client away. A
// caller checking what the database did (the conformance suite) reports a
// refusal as work that could not run, not as a guarantee broken.
type Refusal int

const (
	// NotRefused: the error is about the work, or no refusal the dialect
	// knows of.
	NotRefused Refusal = iota
	// RefusedResources: the server is out of something it shares among
	// its clients: connection slots (PostgreSQL 53300, MySQL 1040, a
	// role's or user's own connection limit: 1203), memory or disk
	// (PostgreSQL's class 53).
	RefusedResources
	// RefusedAccess: the credentials or the rights of the role are not
	// enough (PostgreSQL's class 28 and 42501, MySQL 1044, 1045, 1142).
	RefusedAccess
	// RefusedUnreachable: no connection could be made: the dial failed or
	// timed out, or the name did not resolve.
	RefusedUnreachable
)

// String names the refusal, for messages.
func (r Refusal) String() string {
	switch r {
	case RefusedResources:
		return "out of connections or resources"
	case RefusedAccess:
		return "access denied"
	case RefusedUnreachable:
		return "unreachable"
	}
	return "not refused"
}

// RefusalClassifier is an optional capability of a Dialect: it tells the
// errors by which its server turns a client away from the others.
// RefusalOf finds it by type assertion. The postgres, cockroach and mysql
// dialects implement it.
type RefusalClassifier interface {
	// Refusal returns the kind of refusal err carries (errors.As through
	// its wrapping), or NotRefused.
	Refusal(err error) Refusal
}

// RefusalOf returns the refusal err carries: d's own classification when
// it implements RefusalClassifier, else (and when d knows none) a failed
// or timed-out dial, or a name that did not resolve, which every driver
// reports alike. A context that ended is not a refusal: it may be the
// caller's own deadline on work that hung.
func RefusalOf(d Describer, err error) Refusal {
	if err == nil {
		return NotRefused
	}
	if rc, ok := d.(RefusalClassifier); ok {
		if r := rc.Refusal(err); r != NotRefused {
			return r
		}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return RefusedUnreachable
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return RefusedUnreachable
	}
	return NotRefused
}
