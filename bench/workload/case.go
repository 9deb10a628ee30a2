package workload

import (
	"flag"
	"fmt"
	"time"
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
	// LatencyRecords, when above zero, adds a paced phase after consume:
	// that many single records sent at LatencyRate per second, each timed
	// from send to ack.
	LatencyRecords int
	LatencyRate    int
	// Producers is how many producers share the work, each with a client
	// and connection of its own (a franz-go client; a native connection
	// sending to and polling every Producers-th partition). Zero keeps a
	// kind's usual shape: one franz-go producer, one native connection per
	// partition.
	Producers int
	// IdleConns connections are opened to the broker before the produce
	// phase, each having spoken once (ApiVersions on a Kafka port, a login
	// on an Iggy port), and held, silent, until the phases are over.
	IdleConns int
	// Groups, when above zero, adds the fan-out phases after consume (see
	// FanOutPhases): one consumer group reads a fresh topic, then Groups
	// fresh groups read another one after another, then Groups more a third
	// at once (each topic produced just before its phase, untimed); then one
	// producer sends Records more alone, and Records more again while a
	// consumer reads them at the tail.
	Groups int
	// TxnBatch, when above zero, makes the case the transactions case
	// instead: Records produced by a plain (idempotent) producer
	// (phase "produce"), the same Records again by a transactional
	// producer in transactions of TxnBatch records, each committed before
	// the next begins (TxnProduce, with the commits' p50 and p99), then
	// every record read back READ_COMMITTED ("consume").
	TxnBatch int
}

// The fan-out phases, in the order a client runs them. Each group phase
// counts in Bytes and Records what all its groups received together.
const (
	OneGroup    = "group-1"        // one consumer group reads a topic nobody has read, from the start
	GroupsTurn  = "groups-in-turn" // Groups groups, one after another
	GroupsOnce  = "groups-at-once" // Groups groups at the same time
	TailAlone   = "tail-baseline"  // Records more produced by the tail phase's producer, no consumer reading
	TailConsume = "tail"           // Records more produced while a consumer reads them at the tail
)

// TxnProduce names the transactions case's transactional produce phase;
// its P50 and P99 are those of the commits (the EndTransaction calls).
const TxnProduce = "txn-produce"

// TailPairs is how many times the tail phases run in one round, TailAlone and TailConsume
// one after the other, in turn first and second (ABBA), so that a drift of the machine's load
// within the round does not fall on one side: the consumer's share is a difference of two
// produce runs' CPU, each noisy by a tenth of itself, and its median wants several pairs.
const TailPairs = 3

// FanOutPhases are the phases a case with Groups set adds; the tail ones TailPairs times.
var FanOutPhases = []string{OneGroup, GroupsTurn, GroupsOnce, TailAlone, TailConsume}

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
	fs.IntVar(&c.LatencyRecords, "latency-records", 0, "records of the paced latency phase (0: none)")
	fs.IntVar(&c.LatencyRate, "latency-rate", 1000, "records per second of the latency phase")
	fs.IntVar(&c.Producers, "producers", 0, "producers, each its own client (0: one franz-go producer, one native connection per partition)")
	fs.IntVar(&c.IdleConns, "idle-conns", 0, "idle connections held open to the broker during the phases")
	fs.IntVar(&c.Groups, "groups", 0, "fan-out: consumer groups reading the topic after consume, in turn and at once, then a tail consumer (0: none)")
	fs.IntVar(&c.TxnBatch, "txn-batch", 0, "transactions case: records per transaction of the transactional produce after a plain one (0: not this case)")
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
		"-latency-records", fmt.Sprint(c.LatencyRecords),
		"-latency-rate", fmt.Sprint(max(1, c.LatencyRate)),
		"-producers", fmt.Sprint(c.Producers),
		"-idle-conns", fmt.Sprint(c.IdleConns),
		"-groups", fmt.Sprint(c.Groups),
		"-txn-batch", fmt.Sprint(c.TxnBatch),
	}
}

// Pace calls send LatencyRecords times, LatencyRate times a second, and
// returns how long each call took; send returns when its record is acked.
// A call that overruns its slot delays the next (the ticker drops the
// ticks it missed), so a slow broker sends fewer records per second
// rather than queueing them.
func (c *Case) Pace(send func(i int) error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, c.LatencyRecords)
	tick := time.NewTicker(time.Second / time.Duration(max(1, c.LatencyRate)))
	defer tick.Stop()
	for i := range c.LatencyRecords {
		<-tick.C
		t0 := time.Now()
		if err := send(i); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// Pool builds the case's payload pool.
func (c *Case) Pool() (*Pool, error) { return NewPool(c.Kind, c.Size, c.PoolBytes, c.Seed) }

// BatchCount is the number of messages in one native batch or poll.
func (c *Case) BatchCount() int { return max(1, c.BatchBytes/c.Size) }

// Workers is how many native connections send and poll: Producers, or one
// per partition when it is zero. Worker w owns partitions w, w+Workers, ...
func (c *Case) Workers() int {
	if c.Producers > 0 {
		return min(c.Producers, c.Partitions)
	}
	return c.Partitions
}

// PartitionRecords is how many of the case's records partition p gets when
// a native client deals records out round robin.
func (c *Case) PartitionRecords(p int) int {
	n := c.Records / c.Partitions
	if p < c.Records%c.Partitions {
		n++
	}
	return n
}
