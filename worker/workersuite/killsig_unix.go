//go:build unix

package workersuite

import (
	"os/exec"
	"syscall"
)

// killedBySIGKILL reports whether the process ended by SIGKILL.
func killedBySIGKILL(e *exec.ExitError) bool {
	ws, ok := e.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
