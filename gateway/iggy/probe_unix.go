//go:build linux || darwin || freebsd || netbsd || openbsd

package iggy

import (
	"errors"
	"net"
	"syscall"
)

// peerOpen peeks at the socket without blocking or consuming anything. EOF
// or a socket error means the peer is gone. Pending bytes on a plain
// connection are a reply nobody asked for; under TLS they may be a session
// ticket the TLS layer has not read yet, so they do not count against it.
func peerOpen(tc *net.TCPConn, isTLS bool) bool {
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	open := true
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK) || errors.Is(rerr, syscall.EINTR):
		case rerr != nil, n == 0:
			open = false
		default:
			open = isTLS
		}
		return true
	})
	return err == nil && open
}
