package iggy

import (
	"context"
	"fmt"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// login registers a session on a fresh connection, with a password or a
// personal access token, and returns the user id.
func (c *conn) login(ctx context.Context, cfg *Config) (uint32, error) {
	if cfg.Token != "" {
		return c.loginToken(ctx, cfg.Token, cfg.RequestTimeout)
	}
	return c.loginPassword(ctx, cfg.Username, cfg.Password, cfg.RequestTimeout)
}

func (c *conn) loginPassword(ctx context.Context, user, pass string, timeout time.Duration) (uint32, error) {
	l := wire.PasswordLogin{Version: wire.OurClientVersion(), Username: user, Password: pass}
	return c.register(ctx, wire.CmdLoginRegister, l.AppendTo(nil), timeout)
}

func (c *conn) loginToken(ctx context.Context, token string, timeout time.Duration) (uint32, error) {
	l := wire.TokenLogin{Version: wire.OurClientVersion(), Token: token}
	return c.register(ctx, wire.CmdLoginRegisterWithPAT, l.AppendTo(nil), timeout)
}

// register runs one Register exchange and binds the session it returns.
// A connection that already has a session logs out first and draws a new
// client id, as the protocol requires.
func (c *conn) register(ctx context.Context, cmd wire.Command, body []byte, timeout time.Duration) (uint32, error) {
	if c.session != 0 {
		if _, err := c.exchange(ctx, &call{cmd: wire.CmdLogoutUser}, timeout); err != nil {
			return 0, err
		}
		c.session = 0
	}
	c.newClientID()
	c.counter = 1
	reply, err := c.exchange(ctx, &call{cmd: cmd, body: body}, timeout)
	if err != nil {
		return 0, err
	}
	var lr wire.LoginReply
	if err := lr.Decode(reply); err != nil {
		_ = c.close()
		return 0, fmt.Errorf("%w: login reply: %w", ErrProtocol, err)
	}
	if lr.Session == 0 {
		_ = c.close()
		return 0, protocolError("login reply with session 0")
	}
	c.session = lr.Session
	c.userID = lr.UserID
	return lr.UserID, nil
}

// logout ends the session but keeps the connection.
func (c *conn) logout(ctx context.Context, timeout time.Duration) error {
	if _, err := c.exchange(ctx, &call{cmd: wire.CmdLogoutUser}, timeout); err != nil {
		return err
	}
	c.session = 0
	c.newClientID()
	return nil
}
