package kafka

import "slices"

// Fleet is a gateway's live view of its fleet, kept by the coordinator log: which gateways are
// up and which one is the controller. With a Fleet, Metadata and DescribeCluster list only live
// gateways, and topic changes are accepted by the controller alone, so one gateway orders them
// as Kafka's controller does. Without one (Config.Fleet nil), every configured broker is listed
// and this gateway names itself controller.
type Fleet interface {
	// LiveBrokers are the gateways that own coordinator log partitions or announced themselves
	// recently. Order does not matter; an empty answer falls back to the configured brokers, so
	// a gateway that has not yet heard of its fleet still names a leader for every partition.
	LiveBrokers() []Broker
	// Controller is the node id of the controller (the owner of coordinator log partition 0), or
	// -1 while none is known.
	Controller() int32
	// IsController reports whether this gateway is the controller now.
	IsController() bool
}

// DrainingFleet is a Fleet that knows which gateways lead nothing while listed: those an
// operator drained, and those that are leaving. A drained gateway stays in Metadata's broker
// list, so its clients keep producing and fetching through it, but leads no partition, so
// clients that refresh their metadata move to the others.
type DrainingFleet interface {
	Fleet
	Draining(node int32) bool
}

// leaders is the brokers partition leaders are chosen from: brokers without the drained ones
// and without this gateway while it is a lame duck, or all of them when none is left (a
// partition always has a leader).
func (s *Server) leaders(brokers []Broker) []Broker {
	df, ok := s.cfg.Fleet.(DrainingFleet)
	lame := s.lameDuck.Load()
	if !ok && !lame {
		return brokers
	}
	out := make([]Broker, 0, len(brokers))
	for _, b := range brokers {
		if ok && df.Draining(b.NodeID) || lame && b.NodeID == s.cfg.NodeID {
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return brokers
	}
	return out
}

// liveBrokers is the brokers Metadata lists, sorted by node id: the fleet's live gateways that
// accept connections (reachable), or the configured brokers without a fleet (or while it knows
// none).
//
// Each partition's leader is leaderIndex over this list less the drained gateways (leaders): FNV-1a 32 of the topic name plus the
// partition index, modulo the number of live gateways. Every gateway of one view computes the
// same leaders; when a gateway leaves the view, its partitions move to the others and those of
// the others may move too, which costs a client nothing more than a metadata refresh, since any
// gateway serves any partition.
func (s *Server) liveBrokers() []Broker {
	if s.cfg.Fleet == nil {
		return s.brokers()
	}
	live := s.reachable(s.cfg.Fleet.LiveBrokers())
	if len(live) == 0 {
		return s.brokers()
	}
	slices.SortFunc(live, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
	return slices.CompactFunc(live, func(a, b Broker) bool { return a.NodeID == b.NodeID })
}

// leaderOf is the node Metadata names as leader of the partition now: leaderIndex over the live
// brokers less the drained ones.
func (s *Server) leaderOf(topic string, partition int32) int32 {
	brokers := s.leaders(s.liveBrokers())
	return brokers[leaderIndex(topic, partition, len(brokers))].NodeID
}

// controllerID is what Metadata and DescribeCluster name as controller.
func (s *Server) controllerID() int32 {
	if s.cfg.Fleet == nil {
		return s.cfg.NodeID
	}
	return s.cfg.Fleet.Controller()
}

// notController reports whether topic changes must be refused here with NOT_CONTROLLER (41).
func (s *Server) notController() bool {
	return s.cfg.Fleet != nil && !s.cfg.Fleet.IsController()
}
