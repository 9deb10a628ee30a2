//go:build !linux

package partlog

import (
	"testing"
	"time"
)

func processCPU() time.Duration { return 0 }

func threadSched() (run, wait time.Duration) { return 0, 0 }

func allocated(t *testing.T, _ string) int64 {
	t.Skip("block counts are read on Linux only")
	return 0
}
