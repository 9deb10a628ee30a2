package output

import (
	"strconv"
	"time"
)

// Integer is what IntText shows.
type Integer interface {
	~int32 | ~uint32 | ~uint64 | ~int64 | ~int
}

// IntText is an optional integer as a table cell: its digits, or "" when it is unset.
func IntText[T Integer](p *T) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(int64(*p), 10)
}

// Seconds shows a duration in seconds the way operators read it: 850ms, 12s, 3m4s, 2h5m.
func Seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
