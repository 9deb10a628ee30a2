package logread

import (
	"fmt"
	"strconv"
	"time"
)

// Position is where a range of the log starts or ends: an offset, or a time compared with the
// writer's time of each record. The zero Position is unbounded.
type Position struct {
	Offset    uint64
	HasOffset bool
	Time      time.Time
}

// Set reports whether the position bounds anything.
func (p Position) Set() bool { return p.HasOffset || !p.Time.IsZero() }

// ParsePosition reads an offset (a number), an RFC 3339 time, or a duration meaning that long
// before now ("10m").
func ParsePosition(s string, now time.Time) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return Position{Offset: n, HasOffset: true}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Position{Time: t}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return Position{Time: now.Add(-d)}, nil
	}
	return Position{}, fmt.Errorf("%q is neither an offset, an RFC 3339 time nor a duration ago (10m)", s)
}

// Before reports whether the entry comes before p as a start (so is left out).
func (p Position) Before(off uint64, t time.Time) bool {
	if p.HasOffset {
		return off < p.Offset
	}
	return !p.Time.IsZero() && t.Before(p.Time)
}

// After reports whether the entry comes after p as an inclusive end.
func (p Position) After(off uint64, t time.Time) bool {
	if p.HasOffset {
		return off > p.Offset
	}
	return !p.Time.IsZero() && t.After(p.Time)
}
