package group

import "sync/atomic"

// Metrics are the counts of one gateway's managers, which its metrics endpoint serves. The
// gateway makes one and passes it in Config.Metrics to every manager; the zero value is ready.
type Metrics struct {
	pendingNow     atomic.Int64
	pendingDropped atomic.Uint64
}

// PendingMembers is how many KIP-394 pending members the managers hold, and how many were
// dropped past maxPending per manager.
func (m *Metrics) PendingMembers() (now int64, dropped uint64) {
	return m.pendingNow.Load(), m.pendingDropped.Load()
}
