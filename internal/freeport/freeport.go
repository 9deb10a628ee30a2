// Package freeport finds loopback ports that are free right now, for tests whose configuration
// must name its ports before anything listens on them: a fleet's broker list, a child process's
// --listen. It reserves nothing, so another process may take a port before the test binds it;
// tests that can listen on 127.0.0.1:0 themselves should.
//
// The two functions to know are Addr, one address, and Addrs, several that are distinct from
// each other; Port and Ports are the same as bare port numbers. Only _test.go files may import this package.
package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Addr is a free loopback address, "127.0.0.1:port".
func Addr(t testing.TB) string {
	t.Helper()
	return Addrs(t, 1)[0]
}

// Port is the port of a free loopback address.
func Port(t testing.TB) int {
	t.Helper()
	return Ports(t, 1)[0]
}

// Addrs is n free loopback addresses, all different: each is held until all are found.
func Addrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i, p := range Ports(t, n) {
		addrs[i] = (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}).String()
	}
	return addrs
}

// Ports is the ports of n free loopback addresses, all different.
func Ports(t testing.TB, n int) []int {
	t.Helper()
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ps := make([]int, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		lns = append(lns, ln)
		ps[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ps
}

// Consecutive is the first of n consecutive free loopback ports, for a fleet that numbers its
// listeners up from one base port.
func Consecutive(t testing.TB, n int) int {
	t.Helper()
	for range 50 {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		lns := []net.Listener{first}
		base := first.Addr().(*net.TCPAddr).Port
		for i := 1; i < n && base+i <= 65535; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		for _, ln := range lns {
			ln.Close()
		}
		if len(lns) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
