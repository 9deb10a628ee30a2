package iggy

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Leader following timings (those of the official SDK): a cluster in the
// middle of an election lists no healthy leader for a moment.
var (
	leaderlessBudget = 5 * time.Second
	leaderlessPoll   = 250 * time.Millisecond
)

// followLeader reads the cluster metadata on a freshly logged-in connection
// and, when the cluster has several nodes and the healthy leader is
// elsewhere, moves there (logging in again). A failed metadata read or a
// single node keep the connection where it is. A cluster with no healthy
// leader within the budget (an election) is ErrUnavailable: a follower would
// refuse writes, and it answers reads from what it has applied, which can
// lag what the cluster acknowledged (measured: a new leader served 299 of 300
// acknowledged messages for half a second); a gateway replaying its log from
// there would miss records.
func (c *Client) followLeader(ctx context.Context, cn *conn) (*conn, error) {
	for hop := 0; ; hop++ {
		nodes, ok := c.readNodes(ctx, cn)
		if cn.broken {
			return nil, fmt.Errorf("%w: connection to %s broke reading cluster metadata", ErrConnectionLost, cn.addr)
		}
		if !ok || len(nodes) <= 1 {
			c.settle(cn.addr, nodes)
			return cn, nil
		}
		leader := ""
		clk := c.cfg.Clock
		deadline := clk.Now().Add(leaderlessBudget)
		for leader == "" {
			leader = healthyLeader(nodes)
			if leader != "" {
				break
			}
			if clk.Now().After(deadline) {
				break
			}
			t := clk.NewTimer(leaderlessPoll)
			select {
			case <-ctx.Done():
				t.Stop()
				c.settle("", nodes)
				_ = cn.close()
				return nil, fmt.Errorf("%w: waiting for the Iggy cluster's leader: %w", ErrUnavailable, ctx.Err())
			case <-t.C():
			}
			if nodes, ok = c.readNodes(ctx, cn); !ok {
				if cn.broken {
					return nil, fmt.Errorf("%w: connection to %s broke reading cluster metadata", ErrConnectionLost, cn.addr)
				}
				break
			}
		}
		if leader == "" {
			c.settle("", nodes)
			_ = cn.close()
			return nil, fmt.Errorf("%w: the Iggy cluster at %s names no healthy leader after %v", ErrUnavailable, cn.addr, leaderlessBudget)
		}
		if sameAddress(leader, cn.addr) || hop >= maxRedirects {
			c.settle(cn.addr, nodes)
			return cn, nil
		}
		c.log.Info("iggy: following the cluster leader", "from", cn.addr, "to", leader)
		next, err := c.dialLogin(ctx, leader)
		if err != nil {
			// The leader is unreachable from here. Staying on a follower would leave writes
			// refused and reads behind; the pool dials again with backoff instead.
			c.settle("", nodes)
			_ = cn.close()
			return nil, fmt.Errorf("%w: the Iggy cluster's leader %s, named by %s, is unreachable: %w", ErrUnavailable, leader, cn.addr, err)
		}
		_ = cn.close()
		cn = next
	}
}

// clusterNode is what leader following needs to know about a node.
type clusterNode struct {
	addr    string
	leader  bool
	healthy bool
}

func (c *Client) readNodes(ctx context.Context, cn *conn) ([]clusterNode, bool) {
	body, err := cn.exchange(ctx, &call{cmd: wire.CmdGetClusterMetadata}, c.cfg.RequestTimeout)
	if err != nil {
		c.log.Debug("iggy: no cluster metadata, staying on the dialled node", "addr", cn.addr, "err", err)
		return nil, false
	}
	nodes, err := decodeNodes(body)
	if err != nil {
		c.log.Warn("iggy: undecodable cluster metadata, staying on the dialled node", "addr", cn.addr, "err", err)
		return nil, false
	}
	return nodes, true
}

// settle records where connections should go from now on.
func (c *Client) settle(addr string, nodes []clusterNode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader = addr
	if len(nodes) > 1 {
		c.known = c.known[:0]
		for _, n := range nodes {
			if n.healthy {
				c.known = append(c.known, n.addr)
			}
		}
	}
}

func healthyLeader(nodes []clusterNode) string {
	for _, n := range nodes {
		if n.leader && n.healthy {
			return n.addr
		}
	}
	return ""
}

// sameAddress compares host:port pairs without resolving names: both come
// from configuration or from the cluster roster.
func sameAddress(a, b string) bool {
	norm := func(s string) (string, string) {
		s = strings.ToLower(s)
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return s, ""
		}
		if h == "localhost" {
			h = "127.0.0.1"
		}
		return h, p
	}
	ha, pa := norm(a)
	hb, pb := norm(b)
	if pa != pb {
		return false
	}
	if ia, ib := net.ParseIP(ha), net.ParseIP(hb); ia != nil && ib != nil {
		return ia.Equal(ib)
	}
	return ha == hb
}

func nodeAddr(ip string, port uint16) string {
	return net.JoinHostPort(ip, strconv.Itoa(int(port)))
}

// decodeNodes reads the node list of a cluster metadata reply.
func decodeNodes(b []byte) ([]clusterNode, error) {
	var m wire.ClusterMetadata
	if err := m.Decode(b); err != nil {
		return nil, err
	}
	nodes := make([]clusterNode, len(m.Nodes))
	for i, n := range m.Nodes {
		nodes[i] = clusterNode{
			addr:    nodeAddr(n.IP, n.TCPPort),
			leader:  n.Role == wire.RoleLeader,
			healthy: n.Status == wire.NodeHealthy,
		}
	}
	return nodes, nil
}
