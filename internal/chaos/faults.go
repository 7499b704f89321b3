package chaos

import "fmt"

// applyFaults installs the fault rules of spec in this process.
func applyFaults(spec string) error {
	if spec != "" {
		return fmt.Errorf("chaos worker: fault rules %q: this build has no injection points", spec)
	}
	return nil
}

// DefaultPoints are the fault rules a round's workers run with by
// default: none until the build has injection points.
func DefaultPoints() string { return "" }
