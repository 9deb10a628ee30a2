package fleet

import (
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// Names of the coordinator log inside Iggy. Every gateway and every operator tool uses these.
const (
	// LogTopic holds the records (package record), Partitions partitions.
	LogTopic = "coordinators"
	// OwnersTopic holds the gateways' announcements, one partition.
	OwnersTopic = "coordinator_owners"
	// DrainsTopic holds the operators' drain requests, one partition.
	DrainsTopic = "coordinator_drains"
	// LeaseGroup is the Iggy consumer group on LogTopic whose members hold the leases.
	LeaseGroup = "kafka-gateways"
	// CheckpointConsumer is the Iggy consumer whose stored offset on log partition p is the log
	// offset of p's last checkpoint.
	CheckpointConsumer = "kafka-checkpoints"
)

// Partitions is the number of partitions of LogTopic.
const Partitions = record.Partitions

// MetaStream is the Iggy stream holding the coordinator log of the gateways serving stream.
func MetaStream(stream string) string { return stream + ".meta" }

// DefaultLive is how long an announcement keeps a gateway live unless configured otherwise
// (five announce intervals of 1 s). Gateways and operator tools use the same bound.
const DefaultLive = 5 * time.Second

// LeaseLiveFactor times a View's Live is how long an announcement keeps its member in the lease
// (View.LiveMembers): 20 s with DefaultLive.
const LeaseLiveFactor = 4

// DefaultAnnounceInterval is how often a gateway announces itself.
const DefaultAnnounceInterval = time.Second
