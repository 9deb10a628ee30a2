package main

import (
	"math"
	"slices"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/config"
)

// checkLimits validates the settings that bound what a peer costs. Any buffer budget above zero
// works: a frame larger than it is still read, alone past it (internal/framebuf), so the budget
// need not hold the largest frame the listener accepts.
func checkLimits(v *config.Values) error {
	if v.Duration("read-timeout") <= 0 {
		return v.Invalid("read-timeout", "must be above zero")
	}
	if v.Duration("auth-timeout") <= 0 {
		return v.Invalid("auth-timeout", "must be above zero")
	}
	if v.Bytes("buffer-budget") <= 0 {
		return v.Invalid("buffer-budget", "must be above zero")
	}
	return nil
}

// memoryLimit is the Go runtime's soft memory limit serve runs under (runtime/debug
// SetMemoryLimit): the memory-limit setting, math.MaxInt64 for 0 (no limit), or keep when that
// setting is at its default and environ has GOMEMLIMIT, which the runtime read at start. What a
// gateway holds is mostly request and batch bytes, which hold no pointers, so a collection costs
// little however often the limit calls for one; without it the heap grows to twice what is live
// before the collector runs.
func memoryLimit(v *config.Values, environ []string) (limit int64, keep bool) {
	n := v.Bytes("memory-limit")
	switch {
	case v.Source("memory-limit").Kind == "default" && slices.ContainsFunc(environ, func(e string) bool {
		return strings.HasPrefix(e, "GOMEMLIMIT=") && e != "GOMEMLIMIT="
	}):
		return 0, true
	case n == 0:
		return math.MaxInt64, false
	}
	return n, false
}
