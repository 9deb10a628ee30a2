package bridge

import "sync/atomic"

// Metrics are the counts of one gateway's bridge, which its metrics endpoint serves. The
// gateway makes one and passes it in Config.Metrics; the zero value is ready.
type Metrics struct {
	droppedHeaders        atomic.Uint64
	tailFetches           atomic.Uint64
	endAnswers            atomic.Uint64
	sliceHeads            atomic.Uint64
	rebuiltFetches        atomic.Uint64
	rebuiltStored         atomic.Uint64
	keptFetches           atomic.Uint64
	keptStored            atomic.Uint64
	keptDiskFaults        atomic.Uint64
	pinnedChunks          atomic.Int64
	releaseFaults         atomic.Uint64
	producerScans         atomic.Int64
	producerScansSkipped  atomic.Int64
	producerStatesDropped atomic.Int64
	partStates            atomic.Int64
}

// DroppedHeaders is how many records were served without the kafka.h header section their Iggy
// message carried because it did not parse (a native Iggy client wrote it).
func (m *Metrics) DroppedHeaders() uint64 { return m.droppedHeaders.Load() }

// TailFetches is how many partition reads were answered with producers' own batches from the
// tail cache rather than rebuilt from Iggy.
func (m *Metrics) TailFetches() uint64 { return m.tailFetches.Load() }

// EndAnswers is how many partition reads at the end of a partition, or of its watermarks only,
// were answered from the high watermark Iggy had told within the last 50 ms, or at the end this
// gateway knew while an append of its own there was under way, without asking Iggy again.
func (m *Metrics) EndAnswers() uint64 { return m.endAnswers.Load() }

// SliceHeads is how many partition reads from Iggy started inside a batch whose start this
// gateway did not know, and read that batch's first message as well for its transaction.
func (m *Metrics) SliceHeads() uint64 { return m.sliceHeads.Load() }

// RebuiltFetches is how many partition reads were answered, at least in part, with batches an
// earlier fetch had rebuilt from Iggy (Config.FetchCacheBytes).
func (m *Metrics) RebuiltFetches() uint64 { return m.rebuiltFetches.Load() }

// RebuiltBytesStored is how many bytes of rebuilt batches were put in the fetch cache.
func (m *Metrics) RebuiltBytesStored() uint64 { return m.rebuiltStored.Load() }

// KeptFetches is how many partition reads were answered, at least in part, with producers' own
// batches kept beyond the tail cache in the fetch cache's memory.
func (m *Metrics) KeptFetches() uint64 { return m.keptFetches.Load() }

// KeptBytesStored is how many bytes of producers' batches the tail cache let go were kept in
// the fetch cache's memory.
func (m *Metrics) KeptBytesStored() uint64 { return m.keptStored.Load() }

// KeptDiskFaults is how many writes of kept batches to their files failed, and how many reads
// back failed or did not check (the fetch was answered from Iggy then).
func (m *Metrics) KeptDiskFaults() uint64 { return m.keptDiskFaults.Load() }

// PinnedChunks is how many chunks of the fetch cache answers point into now, handed out and
// not yet released (their Release not yet called): such a chunk is neither emptied nor given
// back. It goes back to 0 once every answer is written; one that stays up is an answer never
// released, which keeps that part of the cache from being reused.
func (m *Metrics) PinnedChunks() int64 { return m.pinnedChunks.Load() }

// ReleaseFaults is how many releases of fetch answers were refused because the answer, or the
// chunk of the fetch cache it pinned, was released already. It stays 0 unless a caller of the
// fetch path breaks its rule (fetchread.go): release each answer exactly once.
func (m *Metrics) ReleaseFaults() uint64 { return m.releaseFaults.Load() }

// ProducerScans counts the tail scans that rebuilt an idempotent producer's state from Iggy.
func (m *Metrics) ProducerScans() int64 { return m.producerScans.Load() }

// ProducerScansSkipped counts the unknown producers taken for new without a scan because a
// recent scan of the partition read it to its bound.
func (m *Metrics) ProducerScansSkipped() int64 { return m.producerScansSkipped.Load() }

// ProducerStatesDropped counts the idempotent producer states dropped, expired or over the
// per-partition bound.
func (m *Metrics) ProducerStatesDropped() int64 { return m.producerStatesDropped.Load() }

// PartitionStates is how many partitions the bridge keeps state for: at most the partitions
// Iggy holds, since a state is made only for a partition found in Iggy.
func (m *Metrics) PartitionStates() int64 { return m.partStates.Load() }
