package output

import "strconv"

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
