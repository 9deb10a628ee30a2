package iggy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Session is one dedicated, logged-in connection outside a Client's pool.
// Consumer-group membership belongs to the connection that joined, so a
// caller that joins a group keeps using its Session for Join, Sync, Poll,
// offsets and Leave. It has every method of Client.
//
// A Session never reconnects: when its connection breaks, the server has
// already dropped its memberships, and pretending otherwise would let a
// caller keep trusting an assignment it no longer holds. Every call after a
// break fails with ErrConnectionLost; open a new Session. While idle it pings
// the server every 5 s so the server does not evict it as stale.
type Session struct {
	api

	mu     sync.Mutex // one request in flight
	cn     *conn
	cfg    *Config
	done   chan struct{}
	once   sync.Once
	pinger sync.WaitGroup
	err    error // why the session ended, once it has
	idle   time.Duration
}

// Session opens a dedicated connection with the client's configuration and
// credentials, on the leader the client follows.
func (c *Client) Session(ctx context.Context) (*Session, error) {
	if c.closed() {
		return nil, ErrClosed
	}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	cn, err := c.connect(dctx)
	if err != nil {
		return nil, err
	}
	s := &Session{cn: cn, cfg: &c.cfg, done: make(chan struct{}), idle: keepAliveInterval}
	s.api = api{d: s}
	s.pinger.Add(1)
	go s.keepAlive()
	return s, nil
}

// Close ends the session: the server drops its group memberships.
func (s *Session) Close() error {
	s.once.Do(func() {
		close(s.done)
		// Closing the socket first unblocks a request in flight, which
		// holds mu.
		_ = s.cn.nc.Close()
		s.mu.Lock()
		s.err = ErrClosed
		s.cn.broken = true
		s.mu.Unlock()
	})
	s.pinger.Wait()
	return nil
}

// Err reports why the session ended, or nil while it is usable: ErrClosed
// after Close, otherwise the error of the call that broke the connection
// (one matching ErrConnectionLost, ErrProtocol, or the wire.Code of an
// eviction such as wire.StaleClient).
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Session) do(ctx context.Context, cl *call) ([]byte, func(), error) {
	var body []byte
	s.mu.Lock()
	err := s.locked(func(cn *conn) (err error) {
		body, err = cn.exchange(ctx, cl, s.cfg.RequestTimeout)
		return err
	})
	if err != nil {
		s.mu.Unlock()
		return nil, nil, err
	}
	return body, s.mu.Unlock, nil
}

func (s *Session) keepAlive() {
	defer s.pinger.Done()
	t := time.NewTicker(s.idle / 5)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		idle := s.err == nil && time.Since(s.cn.lastUsed) >= s.idle
		s.mu.Unlock()
		if !idle {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
		err := s.Ping(ctx)
		cancel()
		if err != nil && s.Err() != nil {
			s.cfg.Logger.Warn("iggy: session keep-alive failed; the session is over", "addr", s.cn.addr, "err", err)
			return
		}
	}
}

// Logout ends the session's login but keeps the connection: the server
// drops its group memberships. Login or LoginWithToken signs in again.
func (s *Session) Logout(ctx context.Context) error {
	return s.withConn(func(cn *conn) error { return cn.logout(ctx, s.cfg.RequestTimeout) })
}

// Login signs the session's connection in as another user (logging the
// current user out first). It returns the user id.
func (s *Session) Login(ctx context.Context, username, password string) (uint32, error) {
	var uid uint32
	err := s.withConn(func(cn *conn) (err error) {
		uid, err = cn.loginPassword(ctx, username, password, s.cfg.RequestTimeout)
		return err
	})
	return uid, err
}

// LoginWithToken signs the session's connection in with a personal access
// token. It returns the user id.
func (s *Session) LoginWithToken(ctx context.Context, token string) (uint32, error) {
	var uid uint32
	err := s.withConn(func(cn *conn) (err error) {
		uid, err = cn.loginToken(ctx, token, s.cfg.RequestTimeout)
		return err
	})
	return uid, err
}

func (s *Session) withConn(fn func(*conn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.locked(fn)
}

// locked runs fn on the connection with mu held, and ends the session when
// fn broke the connection.
func (s *Session) locked(fn func(*conn) error) error {
	if s.err != nil {
		if errors.Is(s.err, ErrClosed) {
			return s.err
		}
		return fmt.Errorf("%w: session ended earlier: %w", ErrConnectionLost, s.err)
	}
	err := fn(s.cn)
	if s.cn.broken {
		s.err = err
		_ = s.cn.close()
	}
	return err
}

func (s *Session) config() *Config { return s.cfg }
