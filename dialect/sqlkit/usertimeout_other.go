//go:build !linux

package sqlkit

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist: the
// keepalive count bounds a dead peer there.
func setUserTimeout(fd uintptr, ms int) error { return nil }
