package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslAuthenticate: v0-2
//
// Behavior:
//   - Carries the PLAIN token ([authzid] NUL user NUL password, RFC 4616). The credentials are
//     checked by Config.Authenticate, which logs in to Iggy as that user; the connection then acts
//     with that user's Storage (and so with that user's Iggy permissions).
//   - Bad credentials answer SASL_AUTHENTICATION_FAILED and the connection closes after the answer.
//   - An authorization id other than empty or the user itself is refused.
//
// Not implemented:
// * Session lifetimes (KIP-368): SessionLifetimeMillis is 0, no re-authentication is demanded.
func init() { regKey(saslAuthenticateKey, 0, 2) }

var errBadPlain = errors.New("malformed SASL PLAIN token")

func (c *conn) handleSASLAuthenticate(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.SASLAuthenticateRequest)
	resp := areq.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if !c.s.cfg.SASL || c.saslMech != mechanismPlain {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate without a PLAIN SaslHandshake"
		resp.ErrorMessage = &msg
		req.setErr(resp.ErrorCode)
		c.authed = false
		return resp, nil
	}
	if err := c.authenticate(req, areq.SASLAuthBytes); err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "authentication failed: invalid username or password"
		if errors.Is(err, errBadPlain) {
			msg = err.Error()
		}
		resp.ErrorMessage = &msg
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	return resp, nil
}

// authenticate checks a PLAIN token and, on success, switches the connection to the user's
// Storage. On failure the connection is left unauthenticated, which closes it.
func (c *conn) authenticate(req *request, token []byte) error {
	c.authed, c.user = false, ""
	user, pass, err := parsePlain(token)
	if err != nil {
		return err
	}
	b, err := c.s.cfg.Authenticate(req.ctx, user, pass)
	if err != nil || b == nil {
		c.s.log.Info("kafka SASL PLAIN authentication failed", append(c.logAttrs(), "user", user, "err", err)...)
		if err == nil {
			err = errors.New("no storage for user")
		}
		return err
	}
	c.storage = b
	c.authed, c.user = true, user
	return nil
}

func parsePlain(token []byte) (user, pass string, err error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 {
		return "", "", errBadPlain
	}
	if len(parts[0]) > 0 && !bytes.Equal(parts[0], parts[1]) {
		return "", "", errors.New("SASL PLAIN authorization id must be empty or the user")
	}
	return string(parts[1]), string(parts[2]), nil
}

// rawSASL handles the bare token that follows a v0 SaslHandshake. It reports whether the
// connection may continue.
func (c *conn) rawSASL(token []byte) bool {
	c.saslRaw = false
	req := &request{ctx: c.ctx}
	if err := c.authenticate(req, token); err != nil {
		return false
	}
	sl := &slot{done: make(chan struct{}), frame: binary.BigEndian.AppendUint32(nil, 0)}
	close(sl.done)
	select {
	case c.out <- sl:
		return true
	case <-c.ctx.Done():
		return false
	}
}
