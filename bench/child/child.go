// Package child is what the benchmark programs read about the processes they start: free local
// addresses to give a child, and a figure of a child's /proc/<pid>/status (Linux only).
package child

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreeAddrs is n different 127.0.0.1 addresses whose ports were free a moment ago.
func FreeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// Status reads one kB figure of /proc/<pid>/status (VmRSS, VmHWM, RssAnon, ...), in bytes.
func Status(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, pid)
}
