package pipeline

import "errors"

// permanentError marks a step error that no retry can fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that the step does not run again: its run halts
// at once with ReasonAttemptsExhausted, whatever attempts are left (and
// can be revived once the cause is fixed). A nil err gives a generic one.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("permanent failure")
	}
	return &permanentError{err: err}
}

// isPermanent reports whether err was marked by Permanent.
func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
