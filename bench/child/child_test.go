package child

import (
	"net"
	"os"
	"testing"
)

// TestStatus: this process's VmRSS is read, in bytes, and a field that is not there is an error.
func TestStatus(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	rss, err := Status(os.Getpid(), "VmRSS")
	if err != nil || rss < 1<<20 {
		t.Fatalf("VmRSS %d bytes, %v; want at least a MiB", rss, err)
	}
	if _, err := Status(os.Getpid(), "NoSuchField"); err == nil {
		t.Fatal("a missing field read without an error")
	}
}

// TestFreeAddrs: the addresses differ and each can be listened on.
func TestFreeAddrs(t *testing.T) {
	addrs, err := FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, addr := range addrs {
		if seen[addr] {
			t.Fatalf("%s given twice in %v", addr, addrs)
		}
		seen[addr] = true
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		l.Close()
	}
}
