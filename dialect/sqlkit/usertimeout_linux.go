package sqlkit

import "syscall"

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option (linux/tcp.h),
// the same on every architecture; package syscall does not name it.
const tcpUserTimeout = 18

// setUserTimeout sets TCP_USER_TIMEOUT on the socket fd, in milliseconds.
func setUserTimeout(fd uintptr, ms int) error {
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, ms)
}
