package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
)

// profile starts a CPU profile of round i into path (with the round's
// number before the extension after the first round) and returns its stop.
func profile(path string, i int) (stop func(), err error) {
	if i > 0 {
		path += "." + strconv.Itoa(i+1)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
