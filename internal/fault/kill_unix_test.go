//go:build unix

package fault_test

import (
	"os/exec"
	"syscall"
)

func killedBySIGKILL(e *exec.ExitError) bool {
	ws, ok := e.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
