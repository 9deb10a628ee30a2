package coordinator

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// checkpointConsumer is the Iggy consumer whose stored offset on log partition p is the log
// offset of p's last checkpoint (see the package doc).
var checkpointConsumer = wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID(fleet.CheckpointConsumer)}
