//go:build !unix

package workersuite

import "os/exec"

// killedBySIGKILL reports whether the process was killed: without
// signals, any failing exit.
func killedBySIGKILL(e *exec.ExitError) bool { return e.ExitCode() != 0 }
