package coordinator

import "sync/atomic"

// Metrics are the counts of one gateway's coordinator, which its metrics endpoint serves. The
// gateway makes one and passes it in Config.Metrics; the zero value is ready.
type Metrics struct {
	nologRemembered atomic.Int64
	nologLoaded     atomic.Uint64
	nologForgotten  atomic.Uint64
}

// GroupOffsetLoads is how many group names the coordinator without the log remembers as loaded
// (at most 1,024), how many loads ran and how many names were forgotten.
func (m *Metrics) GroupOffsetLoads() (remembered int64, loaded, forgotten uint64) {
	return m.nologRemembered.Load(), m.nologLoaded.Load(), m.nologForgotten.Load()
}
