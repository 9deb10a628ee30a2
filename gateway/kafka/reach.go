package kafka

import (
	"context"
	"errors"
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
//
// A dial that is not refused but gets no answer at all (it times out) also tells something of
// this gateway: it may be cut off from part of its fleet. Together with a store it cannot read
// (FleetView.StoreLost), that is a split, not an outage of the store, and Metadata then names no
// leader (brokerView).
const (
	reachTTL     = 50 * time.Millisecond
	reachTimeout = 100 * time.Millisecond
)

type reachability struct {
	mu   sync.Mutex
	seen map[string]reachResult
	// dial is how a gateway's port is tried; nil: a plain TCP dial (tests replace it).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

type reachResult struct {
	at time.Time
	ok bool
	// silent: the dial timed out (no answer), as opposed to refused.
	silent bool
}

// reachable filters brokers (this gateway always kept) to those whose Kafka address accepts a
// connection, dialling the ones without a fresh result in parallel, and returns apart those
// whose dial got no answer at all (silent).
func (s *Server) reachable(brokers []Broker) (out, silent []Broker) {
	if !s.cfg.CheckReachable {
		return slices.Clone(brokers), nil
	}
	now := s.cfg.Clock.Now()
	r := &s.reach
	type probe struct {
		i    int
		addr string
	}
	var probes []probe
	ok := make([]bool, len(brokers))
	quiet := make([]bool, len(brokers))
	r.mu.Lock()
	dial := r.dial
	for i, b := range brokers {
		if b.NodeID == s.cfg.NodeID || b.Host == "" {
			ok[i] = true
			continue
		}
		addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		if res, fresh := r.seen[addr]; fresh && now.Sub(res.at) < reachTTL {
			ok[i], quiet[i] = res.ok, res.silent
			continue
		}
		probes = append(probes, probe{i, addr})
	}
	r.mu.Unlock()
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	if len(probes) > 0 {
		var wg sync.WaitGroup
		for _, p := range probes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(s.ctx, reachTimeout)
				defer cancel()
				nc, err := dial(ctx, "tcp", p.addr)
				if err == nil {
					_ = nc.Close()
				}
				ok[p.i] = err == nil
				var ne net.Error
				quiet[p.i] = errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
			}()
		}
		wg.Wait()
		r.mu.Lock()
		if r.seen == nil {
			r.seen = make(map[string]reachResult)
		}
		for _, p := range probes {
			r.seen[p.addr] = reachResult{at: now, ok: ok[p.i], silent: quiet[p.i]}
		}
		r.mu.Unlock()
	}
	out = make([]Broker, 0, len(brokers))
	for i, b := range brokers {
		switch {
		case ok[i]:
			out = append(out, b)
		case quiet[i]:
			silent = append(silent, b)
		}
	}
	return out, silent
}
