package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses.
const (
	ExitOK      = 0 // the command did what it was asked
	ExitFailure = 1 // the command failed: an invariant did not hold, the database refused
	ExitUsage   = 2 // the command line was wrong
)

// UsageError is a mistake in the command line: exit status 2.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError whose message is formatted as by fmt.Sprintf.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ErrUsageShown means the flag package already printed the problem and the
// usage: nothing more to say, exit 2.
var ErrUsageShown = errors.New("usage shown")

// ExitCode reports err on w and maps it to an exit status.
func ExitCode(w io.Writer, err error) int {
	var ue *UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, ErrUsageShown):
		return ExitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(w, "plenum: %s\n", PrintableLines(errorText(err)))
		return ExitUsage
	}
	// An error may quote what the database holds or said: it is printed
	// escaped like any text read from the database.
	fmt.Fprintf(w, "plenum: %s\n", PrintableLines(errorText(err)))
	return ExitFailure
}

// errorText is err's message without the "plenum: " the library's own
// errors start with (core.ErrSchemaOutdated, say), which ExitCode puts in
// front of every message once.
func errorText(err error) string {
	return strings.TrimPrefix(err.Error(), "plenum: ")
}
