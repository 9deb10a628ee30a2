package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslHandshake: v0-1
//
// Behavior:
//   - PLAIN is the only mechanism; any other is UNSUPPORTED_SASL_MECHANISM with the list.
//   - v1 is followed by SaslAuthenticate requests; after v0 the next frame is the bare PLAIN token
//     (no Kafka header), answered by an empty frame on success or a closed connection on failure.
//   - Without SASL configured, the handshake is ILLEGAL_SASL_STATE.
//
// Not implemented:
// * SCRAM, GSSAPI and OAUTHBEARER.
func init() { regKey(saslHandshakeKey, 0, 1) }

const mechanismPlain = "PLAIN"

func (c *conn) handleSASLHandshake(req *request) (kmsg.Response, error) {
	hreq := req.kreq.(*kmsg.SASLHandshakeRequest)
	resp := hreq.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = []string{mechanismPlain}
	switch {
	case !c.s.cfg.SASL:
		resp.ErrorCode = kerr.IllegalSaslState.Code
	case c.authed:
		// Re-authentication (KIP-368) repeats the handshake on an authenticated connection.
		if hreq.Mechanism != mechanismPlain {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
	case hreq.Mechanism != mechanismPlain:
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
	}
	if resp.ErrorCode == 0 {
		c.saslMech = mechanismPlain
		c.saslRaw = hreq.Version == 0
	}
	req.setErr(resp.ErrorCode)
	return resp, nil
}
