//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package iggy

import "net"

// peerOpen cannot peek portably here; the connection is trusted and a dead
// one shows up on use.
func peerOpen(*net.TCPConn, bool) bool { return true }
