package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Every address Addrs returns is distinct and can be listened on once it returns.
func TestAddrsAreDistinctAndFree(t *testing.T) {
	addrs := Addrs(t, 5)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s returned twice in %v", a, addrs)
		}
		seen[a] = true
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("listening on %s: %v", a, err)
		}
		defer ln.Close()
	}
}

func TestAddrAndPort(t *testing.T) {
	host, port, err := net.SplitHostPort(Addr(t))
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Errorf("Addr = %s:%s (%v)", host, port, err)
	}
	p := Port(t)
	if p <= 0 || p > 65535 {
		t.Fatalf("Port = %d", p)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("Port %d is not free: %v", p, err)
	}
	ln.Close()
}

// The n ports from Consecutive's base can all be listened on at once.
func TestConsecutive(t *testing.T) {
	base := Consecutive(t, 4)
	for i := range 4 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
		if err != nil {
			t.Fatalf("port %d of the run from %d: %v", i, base, err)
		}
		defer ln.Close()
	}
}
