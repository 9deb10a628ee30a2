// Package dial is the one rule of which Kafka addresses the operator commands dial: the
// addresses given (--kafka-bootstrap), else those the gateways announce on coordinator_owners,
// else a fallback. A command that asks the fleet through kadm seeds its client with them, and
// Prober asks each address alone, so that a gateway that does not answer is named with its
// node instead of hidden behind one that does.
//
// The two types to know are Gateways, the addresses chosen and where they came from
// (DialGateways), and Reach, what one address answered (Prober.Probe); GatewaysError is a
// request that no address answered, with the reach of each.
package dial
