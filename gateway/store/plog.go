package store

import (
	"fmt"
	"os"

	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

// partLog is the durable message log of one partition.
type partLog = *partlog.Log

// openPartition opens (or creates) the log of one partition. A topic that
// sets segment_size or enforce_fsync explicitly overrides the server-wide
// settings for its partitions.
func (s *Server) openPartition(streamID, topicID, partitionID uint32, createdAt uint64, opts topicOptions) (*partition, error) {
	dir := s.partitionDir(streamID, topicID, partitionID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: create partition dir: %w", err)
	}
	po := partlog.Options{
		PartitionID:   partitionID,
		SegmentBytes:  s.cfg.SegmentBytes,
		Fsync:         s.cfg.Fsync,
		FsyncInterval: s.cfg.FsyncInterval,
		Logger:        s.log,
		Clock:         s.cfg.Clock,
	}
	if opts.SegmentSize != topicDefaults.SegmentSize {
		po.SegmentBytes = int64(opts.SegmentSize)
	}
	if opts.EnforceFsync {
		po.Fsync = partlog.FsyncAlways
	}
	l, err := partlog.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("store: open partition %d/%d/%d: %w", streamID, topicID, partitionID, err)
	}
	return &partition{id: partitionID, createdAt: createdAt, dir: dir, log: l, offsets: map[consumerKey]uint64{}}, nil
}
