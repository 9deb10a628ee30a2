package main

import (
	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// checkLimits validates the settings that bound what a peer costs. The budget must hold the
// largest frame the listener accepts (maxFrame, named by what), or such a frame could never be
// read.
func checkLimits(v *config.Values, maxFrame int, what string) error {
	if v.Duration("read-timeout") <= 0 {
		return v.Invalid("read-timeout", "must be above zero")
	}
	if v.Duration("auth-timeout") <= 0 {
		return v.Invalid("auth-timeout", "must be above zero")
	}
	if need := framebuf.Need(maxFrame); v.Bytes("buffer-budget") < need {
		return v.Invalid("buffer-budget", "must be at least %d bytes to hold one request of %s", need, what)
	}
	return nil
}
