package gateway

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Bounds of waitLeadersMoved: how long a leaving gateway waits for the others to stop naming it
// leader (they keep listing it as a broker that long, kafka.Fleet), and how often it asks them.
const (
	leadersMovedBound = 2 * time.Second
	leadersMovedPoll  = 20 * time.Millisecond
)

// waitLeadersMoved waits, after Leave and before the lame duck, until every other live gateway
// answers Metadata naming this one leader of no partition: what a client refreshing its metadata
// there is told. The lame duck's NOT_LEADER_OR_FOLLOWER then sends clients to the new leaders
// at once, instead of back here for another backoff (librdkafka's grows from 100 ms). The others
// read the leave every FollowInterval, which the coordinator's WaitSeen allows for; a loaded one
// may take longer. Without the coordinator log there is no leave to read, and it returns at once.
// It asks each every leadersMovedPoll through the peers' clients, and gives up
// after leadersMovedBound or when ctx ends (a peer it cannot reach counts as not moved).
func (g *Gateway) waitLeadersMoved(ctx context.Context, clk clock.Clock) error {
	if !g.cfg.CoordinatorLog {
		return nil // no leave: the others go on naming this gateway as configured
	}
	var others []string
	for _, b := range g.coord.Fleet().View().Live {
		if b.NodeID != g.cfg.NodeID {
			others = append(others, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
		}
	}
	if len(others) == 0 {
		return nil
	}
	bound := clk.NewTimer(leadersMovedBound)
	defer bound.Stop()
	for {
		var err error
		for len(others) > 0 {
			if err = g.namesMeLeader(ctx, others[0]); err != nil {
				break
			}
			others = others[1:]
		}
		if err == nil {
			return nil
		}
		poll := clk.NewTimer(leadersMovedPoll)
		select {
		case <-ctx.Done():
			poll.Stop()
			return err
		case <-bound.C():
			poll.Stop()
			return err
		case <-poll.C():
		}
	}
}

// namesMeLeader asks the gateway at addr for the metadata of every topic and returns an error
// while it names this gateway leader of a partition, or cannot be asked.
func (g *Gateway) namesMeLeader(ctx context.Context, addr string) error {
	req := kmsg.NewPtrMetadataRequest() // null topics: all of them
	resp, err := g.peers.send(ctx, addr, req)
	if err != nil {
		return fmt.Errorf("metadata from %s: %w", addr, err)
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader == g.cfg.NodeID {
				name := ""
				if t.Topic != nil {
					name = *t.Topic
				}
				return fmt.Errorf("%s names node %d leader of %s/%d", addr, g.cfg.NodeID, name, p.Partition)
			}
		}
	}
	return nil
}
