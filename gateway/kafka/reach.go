package kafka

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A gateway that crashed is out of the fleet's view once its lease membership ends, but a
// client that lost its connection to it asks for Metadata within a millisecond, sooner than
// the store may have noticed the crash, and franz-go asks again only 5 s later. So before
// Metadata names the other gateways, it checks that each still accepts connections: a dial to a
// crashed gateway's port is refused at once. A result is kept for reachTTL; a dial that takes
// longer than reachTimeout (a host that went away) counts as refused. A gateway left out of one
// answer by mistake only loses that answer's partitions to the others, which serve them as well.
const (
	reachTTL     = 50 * time.Millisecond
	reachTimeout = 100 * time.Millisecond
)

type reachability struct {
	mu   sync.Mutex
	seen map[string]reachResult
}

type reachResult struct {
	at time.Time
	ok bool
}

// reachable filters brokers (this gateway always kept) to those whose Kafka address accepts a
// connection, dialling the ones without a fresh result in parallel.
func (s *Server) reachable(brokers []Broker) []Broker {
	if !s.cfg.CheckReachable {
		return slices.Clone(brokers)
	}
	now := s.cfg.Clock.Now()
	r := &s.reach
	type probe struct {
		i    int
		addr string
	}
	var probes []probe
	ok := make([]bool, len(brokers))
	r.mu.Lock()
	for i, b := range brokers {
		if b.NodeID == s.cfg.NodeID || b.Host == "" {
			ok[i] = true
			continue
		}
		addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		if res, fresh := r.seen[addr]; fresh && now.Sub(res.at) < reachTTL {
			ok[i] = res.ok
			continue
		}
		probes = append(probes, probe{i, addr})
	}
	r.mu.Unlock()
	if len(probes) > 0 {
		var wg sync.WaitGroup
		for _, p := range probes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(s.ctx, reachTimeout)
				defer cancel()
				var d net.Dialer
				nc, err := d.DialContext(ctx, "tcp", p.addr)
				if err == nil {
					_ = nc.Close()
				}
				ok[p.i] = err == nil
			}()
		}
		wg.Wait()
		r.mu.Lock()
		if r.seen == nil {
			r.seen = make(map[string]reachResult)
		}
		for _, p := range probes {
			r.seen[p.addr] = reachResult{at: now, ok: ok[p.i]}
		}
		r.mu.Unlock()
	}
	out := make([]Broker, 0, len(brokers))
	for i, b := range brokers {
		if ok[i] {
			out = append(out, b)
		}
	}
	return out
}
