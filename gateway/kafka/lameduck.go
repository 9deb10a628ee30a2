package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LameDuck is the step of a controlled shutdown between the gateway's leaving the fleet and its
// closing the listener (nats-server's lame-duck mode, Kafka's controlled shutdown): it names
// itself leader of no partition in Metadata, answers every partition of a Produce or Fetch with
// NOT_LEADER_OR_FOLLOWER, so clients refresh their metadata and move to the partitions' new
// leaders while their connections still work, and ends the long polls in flight at once. The
// gateway calls it once the other gateways have stopped naming it (they read its leaving
// announcement), so a client that refreshes anywhere gets the new leaders. With no other broker
// listed it changes nothing: clients would have nowhere to go.
func (s *Server) LameDuck() {
	if len(s.othersListed()) == 0 {
		return
	}
	s.lameDuck.Store(true)
	s.drainOnce.Do(func() { close(s.draining) })
}

// othersListed is the brokers Metadata lists besides this gateway.
func (s *Server) othersListed() []Broker {
	var out []Broker
	for _, b := range s.brokerView().listed {
		if b.NodeID != s.cfg.NodeID {
			out = append(out, b)
		}
	}
	return out
}

// notLeader answers a Produce or Fetch of a lame duck, or of a gateway split off from its store
// and part of its fleet (splitOff, fleet.go): NOT_LEADER_OR_FOLLOWER for every
// partition it names, nothing stored and nothing read.
func (c *conn) notLeader(req *request) (kmsg.Response, error) {
	code := kerr.NotLeaderForPartition.Code
	req.setErr(code)
	switch r := req.kreq.(type) {
	case *kmsg.ProduceRequest:
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	case *kmsg.FetchRequest:
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		resp.SessionID = 0
		for _, rt := range r.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				st.Partitions = append(st.Partitions, fetchFailed(rp.Partition, code))
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	return c.unsupported(req)
}
