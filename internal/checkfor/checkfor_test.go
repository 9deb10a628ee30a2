package checkfor

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitReportsLastError(t *testing.T) {
	n := 0
	err := Wait(30*time.Millisecond, func() error {
		n++
		return errors.New("seen " + strings.Repeat("x", n%3))
	})
	if err == nil {
		t.Fatal("Wait succeeded on a condition that never holds")
	}
	if !strings.Contains(err.Error(), "seen") || n < 2 {
		t.Fatalf("err %q after %d checks", err, n)
	}
}

func TestWaitReturnsOnceTrue(t *testing.T) {
	n := 0
	if err := Wait(10*time.Second, func() error {
		n++
		return True(n >= 3, "n=%d", n)
	}); err != nil || n != 3 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}
