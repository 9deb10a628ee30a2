package workload

import (
	"flag"
	"fmt"
)

// Case is what one client run moves, as the runner passes it on the
// command line of every client program alike.
type Case struct {
	Addr       string // broker address: Kafka port, or the Iggy store port
	BrokerPID  int    // the broker's process, whose CPU the windows read
	Topic      string // a fresh topic (and for Iggy, stream) name
	Kind       string // Random or JSON
	Size       int    // value size in bytes
	Records    int    // records produced, then consumed
	Partitions int
	PoolBytes  int
	Seed       uint64
	// BatchBytes sizes a native client's send batches and polls; franz-go
	// batches on its own (1 MiB per partition at most by default).
	BatchBytes int
}

// Register adds the case's flags to fs.
func (c *Case) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "", "broker address")
	fs.IntVar(&c.BrokerPID, "broker-pid", 0, "broker process id, for its CPU time")
	fs.StringVar(&c.Topic, "topic", "bench", "topic to create, fill, read and delete")
	fs.StringVar(&c.Kind, "kind", Random, "payload: random or json")
	fs.IntVar(&c.Size, "size", 1024, "value size in bytes")
	fs.IntVar(&c.Records, "records", 100_000, "records to produce and consume")
	fs.IntVar(&c.Partitions, "partitions", 3, "partitions of the topic")
	fs.IntVar(&c.PoolBytes, "pool-bytes", DefaultPoolBytes, "bytes of distinct values to draw from")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the payload pool")
	fs.IntVar(&c.BatchBytes, "batch-bytes", 1<<20, "payload bytes per native send batch and poll")
}

// Args is the command line that Register parses back into c.
func (c *Case) Args() []string {
	return []string{
		"-addr", c.Addr,
		"-broker-pid", fmt.Sprint(c.BrokerPID),
		"-topic", c.Topic,
		"-kind", c.Kind,
		"-size", fmt.Sprint(c.Size),
		"-records", fmt.Sprint(c.Records),
		"-partitions", fmt.Sprint(c.Partitions),
		"-pool-bytes", fmt.Sprint(c.PoolBytes),
		"-seed", fmt.Sprint(c.Seed),
		"-batch-bytes", fmt.Sprint(c.BatchBytes),
	}
}

// Pool builds the case's payload pool.
func (c *Case) Pool() (*Pool, error) { return NewPool(c.Kind, c.Size, c.PoolBytes, c.Seed) }

// BatchCount is the number of messages in one native batch or poll.
func (c *Case) BatchCount() int { return max(1, c.BatchBytes/c.Size) }

// PartitionRecords is how many of the case's records partition p gets when
// a native client deals records out round robin.
func (c *Case) PartitionRecords(p int) int {
	n := c.Records / c.Partitions
	if p < c.Records%c.Partitions {
		n++
	}
	return n
}
