package partlog

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadSched is the calling thread's time on a CPU and time spent runnable
// but waiting for one, from /proc/thread-self/schedstat.
func threadSched() (run, wait time.Duration) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, 0
	}
	var r, w, n int64
	if _, err := fmt.Sscan(string(b), &r, &w, &n); err != nil {
		return 0, 0
	}
	return time.Duration(r), time.Duration(w)
}

// allocated is the bytes of disk a file holds.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}
