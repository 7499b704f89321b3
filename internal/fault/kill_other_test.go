//go:build !unix

package fault_test

import "os/exec"

func killedBySIGKILL(e *exec.ExitError) bool { return e.ExitCode() != 0 }
