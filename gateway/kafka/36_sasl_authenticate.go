package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// SaslAuthenticate: v0-2
//
// Behavior:
//   - PLAIN: one request carries the token ([authzid] NUL user NUL password, RFC 4616). The
//     credentials are checked by Config.Authenticate, which logs in to Iggy as that user; the
//     connection then acts with that user's Storage (and so with that user's Iggy permissions).
//     An authorization id other than empty or the user itself is refused.
//   - SCRAM-SHA-256 and SCRAM-SHA-512 (with Config.SCRAM): the first request carries the
//     client-first message and is answered with the server-first message, the second carries
//     the client-final message and is answered with the server-final message (RFC 5802; the
//     messages' rules are package scram's). The credential is read from Config.SCRAM at the
//     first request, so a credential altered at any gateway is the one checked; once the proof
//     holds, Config.SCRAM.Login gives the Storage the connection acts through.
//   - Bad credentials, a user without a credential for the mechanism, and a malformed message
//     answer SASL_AUTHENTICATION_FAILED (a malformed message with what is wrong), and the
//     connection closes after the answer.
//   - After a v0 SaslHandshake the same tokens come as bare frames (no Kafka header), each
//     answered by a bare frame (empty for PLAIN); a failure closes the connection.
//
// Not implemented:
// * Session lifetimes (KIP-368): SessionLifetimeMillis is 0, no re-authentication is demanded.
// * Delegation tokens (SCRAM's tokenauth extension), channel binding (SCRAM-*-PLUS).
func init() { regKey(saslAuthenticateKey, 0, 2) }

var errBadPlain = errors.New("malformed SASL PLAIN token")

func (c *conn) handleSASLAuthenticate(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.SASLAuthenticateRequest)
	resp := areq.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if !c.s.cfg.SASL || c.saslMech == "" {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate without a SaslHandshake"
		resp.ErrorMessage = &msg
		req.setErr(resp.ErrorCode)
		c.authed, c.scram = false, nil
		return resp, nil
	}
	reply, err := c.saslStep(req.ctx, areq.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := saslFailure(c.saslMech, err)
		resp.ErrorMessage = &msg
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	resp.SASLAuthBytes = reply
	return resp, nil
}

// saslStep takes the next token of the mechanism the handshake chose and returns the answer.
// The connection is authenticated once a step completes the mechanism; until then, while a
// SCRAM exchange is under way, c.scram holds it. On failure the connection is left
// unauthenticated, which closes it.
func (c *conn) saslStep(ctx context.Context, token []byte) ([]byte, error) {
	if c.scram == nil {
		c.authed, c.user, c.saslAttempt = false, "", ""
	}
	var reply []byte
	var err error
	m, isSCRAM := scram.ParseMechanism(c.saslMech)
	switch {
	case c.saslMech == mechanismPlain:
		err = c.authenticatePlain(ctx, token)
	case isSCRAM && c.s.cfg.SCRAM != nil && c.scram == nil:
		reply, err = c.scramFirst(ctx, m, token)
	case isSCRAM && c.s.cfg.SCRAM != nil:
		reply, err = c.scramFinal(ctx, token)
	default:
		err = errors.New("no such mechanism")
	}
	if err != nil {
		c.authed, c.user, c.scram = false, "", nil
		c.s.log.Info("kafka SASL authentication failed", append(c.logAttrs(), "mechanism", c.saslMech, "user", c.saslAttempt, "err", err)...)
		return nil, err
	}
	return reply, nil
}

// saslFailure is the message a failed step answers: what is malformed, else that the
// credentials are not accepted, without saying which part.
func saslFailure(mech string, err error) string {
	var me *scram.MalformedError
	switch {
	case errors.Is(err, errBadPlain):
		return err.Error()
	case errors.As(err, &me):
		return "malformed " + mech + " message: " + me.Error()
	}
	return "authentication failed: invalid credentials with SASL mechanism " + mech
}

// authenticatePlain checks a PLAIN token and, on success, switches the connection to the
// user's Storage.
func (c *conn) authenticatePlain(ctx context.Context, token []byte) error {
	user, pass, err := parsePlain(token)
	if err != nil {
		return err
	}
	c.saslAttempt = user
	b, err := c.s.cfg.Authenticate(ctx, user, pass)
	if err != nil || b == nil {
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

// rawSASL handles a bare token after a v0 SaslHandshake. It reports whether the connection
// may continue; the frames stay bare until the mechanism completes.
func (c *conn) rawSASL(token []byte) bool {
	reply, err := c.saslStep(c.ctx, token)
	if err != nil {
		c.saslRaw = false
		return false
	}
	if c.scram == nil {
		c.saslRaw = false
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(reply)), uint32(len(reply)))
	sl := &slot{done: make(chan struct{}), frame: append(frame, reply...)}
	close(sl.done)
	select {
	case c.out <- sl:
		return true
	case <-c.ctx.Done():
		return false
	}
}
