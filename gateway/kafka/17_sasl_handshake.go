package kafka

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// SaslHandshake: v0-1
//
// Behavior:
//   - Lists PLAIN and, with Config.SCRAM, SCRAM-SHA-256 and SCRAM-SHA-512; any other mechanism
//     is UNSUPPORTED_SASL_MECHANISM with the list.
//   - v1 is followed by SaslAuthenticate requests; after v0 the mechanism's tokens come as bare
//     frames (no Kafka header), each answered by a bare frame, a failure by a closed connection
//     (36_sasl_authenticate.go).
//   - A handshake abandons a SCRAM exchange under way.
//   - Without SASL configured, the handshake is ILLEGAL_SASL_STATE.
//
// Not implemented:
// * GSSAPI and OAUTHBEARER.
func init() { regKey(saslHandshakeKey, 0, 1) }

const mechanismPlain = "PLAIN"

// mechanisms are the SASL mechanisms this server offers.
func (s *Server) mechanisms() []string {
	out := []string{mechanismPlain}
	if s.cfg.SCRAM != nil {
		for _, m := range scram.Mechanisms {
			out = append(out, m.String())
		}
	}
	return out
}

func (c *conn) handleSASLHandshake(req *request) (kmsg.Response, error) {
	hreq := req.kreq.(*kmsg.SASLHandshakeRequest)
	resp := hreq.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = c.s.mechanisms()
	c.scram = nil
	switch {
	case !c.s.cfg.SASL:
		resp.ErrorCode = kerr.IllegalSaslState.Code
	case !slices.Contains(resp.SupportedMechanisms, hreq.Mechanism):
		// Re-authentication (KIP-368) repeats the handshake on an authenticated connection,
		// which keeps its authentication when the mechanism is refused.
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
	}
	if resp.ErrorCode == 0 {
		c.saslMech = hreq.Mechanism
		c.saslRaw = hreq.Version == 0
	}
	req.setErr(resp.ErrorCode)
	return resp, nil
}
