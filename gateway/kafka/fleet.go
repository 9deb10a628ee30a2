package kafka

import "slices"

// Fleet is a gateway's live view of its fleet, kept by the coordinator log: which gateways are
// up, which of them lead nothing, and which one is the controller. With a Fleet, Metadata and
// DescribeCluster list only live gateways, and topic changes are accepted by the controller
// alone, so one gateway orders them as Kafka's controller does. Without one (Config.Fleet nil),
// every configured broker is listed and this gateway names itself controller.
type Fleet interface {
	// View is the fleet as last seen. It does no I/O and does not wait: the coordinator keeps it
	// current in the background. A request takes one View and answers all of its parts from it.
	View() *FleetView
}

// FleetView is one reading of the fleet. It is never changed once made: a newer reading is a
// new FleetView.
type FleetView struct {
	// Live are the gateways that own coordinator log partitions or announced themselves
	// recently. Order does not matter; an empty list falls back to the configured brokers, so a
	// gateway that has not yet heard of its fleet still names a leader for every partition.
	Live []Broker
	// Draining are the node ids of gateways listed but leading nothing: those an operator
	// drained, and those that are leaving. A drained gateway stays in Metadata's broker list, so
	// its clients keep producing and fetching through it, but leads no partition, so clients
	// that refresh their metadata move to the others.
	Draining []int32
	// Controller is the node id of the controller (the owner of coordinator log partition 0),
	// or -1 while none is known.
	Controller int32
	// StoreLost: this gateway's reads of the fleet's log in the store fail (the view is as of
	// the last one that succeeded).
	StoreLost bool
}

// brokerView is what one request knows of the fleet, taken once (Server.brokerView), so that
// every partition of an answer is decided by the same brokers.
type brokerView struct {
	// listed are the brokers Metadata lists, sorted by node id: the fleet's live gateways that
	// accept connections (reachable), or the configured brokers without a fleet (or while it
	// knows none).
	listed []Broker
	// leaders are the brokers partition leaders are chosen from: listed without the draining
	// ones and without this gateway while it is a lame duck, or all of listed when none is left
	// (a partition always has a leader), or none while this gateway is split off (see
	// brokerView).
	leaders    []Broker
	controller int32
	// cache is the Server's: partition leaders per topic, per view.
	cache *leaderCache
}

// brokerView takes the fleet's current view for one request.
//
// Each partition's leader is partitionLeaders' over the leaders: every gateway of one view
// computes the same leaders; when a gateway leaves the view, its partitions move to the others
// and few others move, so most clients keep the connections they produce and fetch on.
func (s *Server) brokerView() brokerView {
	if s.cfg.Fleet == nil {
		bs := s.brokers()
		return brokerView{listed: bs, leaders: s.leaders(bs, nil), controller: s.cfg.NodeID, cache: &s.leaderCache}
	}
	fv := s.cfg.Fleet.View()
	listed, silent := s.reachable(fv.Live)
	v := brokerView{controller: fv.Controller, listed: listed, cache: &s.leaderCache}
	if len(v.listed) == 0 {
		v.listed = s.brokers()
	} else {
		slices.SortFunc(v.listed, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
		v.listed = slices.CompactFunc(v.listed, func(a, b Broker) bool { return a.NodeID == b.NodeID })
	}
	v.leaders = s.leaders(v.listed, fv.Draining)
	if fv.StoreLost && len(silent) > 0 {
		// Split off: this gateway cannot read the store, and a gateway of its fleet does not
		// answer its dials (a refused dial is a crash, which reach.go leaves out). The other
		// side may have the store and serve every partition; what this gateway knows of the
		// fleet stopped when its reads did, so it names no leader, and clients keep the leaders
		// they learnt elsewhere (a partition error keeps a client's last leader) or ask again.
		// The silent gateways stay listed: what this gateway cannot reach, its clients may, and
		// they ask the brokers listed for metadata. When the whole store is down every gateway
		// still answers every other's dials and keeps naming the leaders of its last view, so
		// clients keep their connections.
		v.listed = append(v.listed, silent...)
		slices.SortFunc(v.listed, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
		v.listed = slices.CompactFunc(v.listed, func(a, b Broker) bool { return a.NodeID == b.NodeID })
		v.leaders = nil
	}
	return v
}

// splitOff reports whether this gateway names no leader now (brokerView): it answers Produce
// and Fetch NOT_LEADER_OR_FOLLOWER at once then, as a lame duck does, rather than holding a
// write it cannot make until the request times out.
func (s *Server) splitOff() bool {
	if s.cfg.Fleet == nil || !s.cfg.Fleet.View().StoreLost {
		return false
	}
	return len(s.brokerView().leaders) == 0
}

// leaders is brokers less the draining ones and less this gateway while it is a lame duck, or
// all of brokers when none is left.
func (s *Server) leaders(brokers []Broker, draining []int32) []Broker {
	lame := s.lameDuck.Load()
	if len(draining) == 0 && !lame {
		return brokers
	}
	out := make([]Broker, 0, len(brokers))
	for _, b := range brokers {
		if slices.Contains(draining, b.NodeID) || lame && b.NodeID == s.cfg.NodeID {
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return brokers
	}
	return out
}

// leadersOf is the node Metadata names as leader of each of the partitions of topic, in this
// view; shared, not to be changed.
func (v brokerView) leadersOf(topic string, partitions int32) []int32 {
	return v.cache.get(topic, partitions, v.leaders)
}

// leaderOf is the node Metadata names as leader of partition of topic (of partitions) in this
// view, or -1 for a partition the topic does not have or while no gateway can lead.
func (v brokerView) leaderOf(topic string, partitions, partition int32) int32 {
	leaders := v.leadersOf(topic, partitions)
	if partition < 0 || int(partition) >= len(leaders) {
		return -1
	}
	return leaders[partition]
}

// notController reports whether topic changes must be refused here with NOT_CONTROLLER (41).
func (s *Server) notController() bool {
	return s.cfg.Fleet != nil && s.cfg.Fleet.View().Controller != s.cfg.NodeID
}
