package main

import (
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
