package iggy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Client is a pool of logged-in connections to an Iggy server (or to the
// leader of an Iggy cluster). It is safe for concurrent use; each call
// borrows one connection for the length of one request.
type Client struct {
	api

	cfg Config
	log *slog.Logger
	// Slots with a connection wait in idle, the others in empty; callers
	// prefer idle ones so the pool only grows under concurrency.
	idle  chan *slot
	empty chan *slot
	all   []*slot
	done  chan struct{}
	once  sync.Once

	mu     sync.Mutex
	leader string   // where the last login settled; dialled first
	known  []string // healthy nodes from cluster metadata
	userID uint32
}

// slot is one place in the pool. Its owner (whoever took it from the
// channel) uses c freely; mu only guards swapping c against Close.
type slot struct {
	mu       sync.Mutex
	c        *conn
	backoff  time.Duration
	nextDial time.Time
}

// Dial connects to the first reachable address of cfg, logs in, follows the
// cluster leader if the server reports one elsewhere, and returns a Client
// whose pool fills on demand. A login refusal comes back as the server's
// code (wire.InvalidCredentials, wire.InvalidPersonalAccessToken, ...).
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	c := &Client{
		cfg:   cfg,
		log:   cfg.Logger,
		idle:  make(chan *slot, cfg.PoolSize),
		empty: make(chan *slot, cfg.PoolSize),
		done:  make(chan struct{}),
	}
	c.api = api{d: c}
	first, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	for i := 0; i < cfg.PoolSize; i++ {
		s := &slot{}
		if i == 0 {
			s.c = first
		}
		c.all = append(c.all, s)
		c.put(s)
	}
	return c, nil
}

// Close closes every connection. Calls in flight fail; later calls return
// ErrClosed.
func (c *Client) Close() error {
	c.once.Do(func() {
		close(c.done)
		for _, s := range c.all {
			s.mu.Lock()
			if s.c != nil {
				_ = s.c.abort()
			}
			s.mu.Unlock()
		}
	})
	return nil
}

// UserID is the id of the user the client logged in as.
func (c *Client) UserID() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.userID
}

// Leader is the address the client's connections go to.
func (c *Client) Leader() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

func (c *Client) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// do runs one call on a pooled connection. A read whose connection broke is
// resent once on a fresh connection; a write is not.
func (c *Client) do(ctx context.Context, cl *call) ([]byte, func(), error) {
	var s *slot
	select {
	case s = <-c.idle:
	default:
		select {
		case s = <-c.idle:
		case s = <-c.empty:
		case <-c.done:
			return nil, nil, ErrClosed
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	release := func() { c.put(s) }
	for attempt := 0; ; attempt++ {
		cn, err := c.ready(ctx, s)
		if err != nil {
			release()
			return nil, nil, err
		}
		body, err := cn.exchange(ctx, cl, c.cfg.RequestTimeout)
		if cn.broken {
			c.drop(s, cn)
		}
		if err != nil && cn.broken && attempt == 0 && cl.idempotent() && ctx.Err() == nil &&
			errors.Is(err, ErrConnectionLost) && !c.closed() {
			c.log.Debug("iggy: resending read on a fresh connection", "addr", cn.addr, "err", err)
			continue
		}
		if errors.Is(err, errNotAccepted) && attempt < maxRedirects && ctx.Err() == nil && !c.closed() {
			// Not applied: send it again where the cluster now says its leader is.
			c.log.Info("iggy: node does not accept requests; following the cluster leader", "addr", cn.addr)
			c.forgetLeader(cn.addr)
			continue
		}
		if err != nil {
			release()
			return nil, nil, err
		}
		return body, release, nil
	}
}

// ready returns the slot's connection, dialling a new one (with backoff
// after failures) when it is missing or went bad while idle.
func (c *Client) ready(ctx context.Context, s *slot) (*conn, error) {
	if c.closed() {
		return nil, ErrClosed
	}
	if s.c != nil && s.c.alive() {
		return s.c, nil
	}
	if s.c != nil {
		c.drop(s, s.c)
	}
	dialCtx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	var lastErr error
	for {
		if wait := s.nextDial.Sub(c.cfg.Clock.Now()); wait > 0 {
			t := c.cfg.Clock.NewTimer(wait)
			select {
			case <-t.C():
			case <-dialCtx.Done():
				t.Stop()
				if lastErr == nil {
					lastErr = dialCtx.Err()
				}
				if ctx.Err() != nil {
					return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
				}
				return nil, lastErr
			case <-c.done:
				t.Stop()
				return nil, ErrClosed
			}
		}
		cn, err := c.connect(dialCtx)
		if err == nil {
			s.backoff = 0
			s.mu.Lock()
			s.c = cn
			s.mu.Unlock()
			if c.closed() {
				_ = cn.close()
				return nil, ErrClosed
			}
			return cn, nil
		}
		lastErr = err
		if s.backoff == 0 {
			s.backoff = backoffMin
		} else if s.backoff *= 2; s.backoff > backoffMax {
			s.backoff = backoffMax
		}
		s.nextDial = c.cfg.Clock.Now().Add(s.backoff)
		if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrConnectionLost) {
			// The server answered (a refused login, say): waiting will not
			// change its mind within this call.
			return nil, err
		}
		if dialCtx.Err() != nil {
			return nil, err
		}
	}
}

func (c *Client) put(s *slot) {
	if s.c != nil {
		c.idle <- s
	} else {
		c.empty <- s
	}
}

func (c *Client) drop(s *slot, cn *conn) {
	_ = cn.close()
	s.mu.Lock()
	if s.c == cn {
		s.c = nil
	}
	s.mu.Unlock()
}

// forgetLeader stops dialling addr first: a node that refuses requests as not
// its to accept is no longer the leader. connect asks the cluster again.
func (c *Client) forgetLeader(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameAddress(c.leader, addr) {
		c.leader = ""
	}
}

// candidates lists the addresses to dial: the leader the client settled
// on, then the configured ones, then healthy nodes seen in cluster metadata.
func (c *Client) candidates() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, 1+len(c.cfg.Addrs)+len(c.known))
	seen := map[string]bool{}
	for _, list := range [][]string{{c.leader}, c.cfg.Addrs, c.known} {
		for _, a := range list {
			if a != "" && !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// connect dials the candidates in order, logs in on the first that
// answers and settles on the cluster leader.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	var errs []error
	for _, addr := range c.candidates() {
		cn, err := c.dialLogin(ctx, addr)
		if errors.Is(err, ErrConnectionLost) && ctx.Err() == nil {
			// The node took the connection and lost the login (no reply, a reset while it
			// restarts): once more before the next address.
			cn, err = c.dialLogin(ctx, addr)
		}
		if err != nil {
			if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrConnectionLost) {
				return nil, err
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return c.followLeader(ctx, cn)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%w: no address configured", ErrUnavailable)
	}
	return nil, errors.Join(errs...)
}

func (c *Client) dialLogin(ctx context.Context, addr string) (*conn, error) {
	cn, err := dialConn(ctx, addr, &c.cfg)
	if err != nil {
		return nil, err
	}
	uid, err := cn.login(ctx, &c.cfg)
	if err != nil {
		_ = cn.close()
		return nil, err
	}
	c.mu.Lock()
	c.userID = uid
	c.mu.Unlock()
	return cn, nil
}

// Logout logs every pooled connection out and closes the client: a pool
// without a login cannot serve requests.
func (c *Client) Logout(ctx context.Context) error {
	var errs []error
	for range c.all {
		var s *slot
		select {
		case s = <-c.idle:
		case s = <-c.empty:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		case <-c.done:
			return ErrClosed
		}
		if s == nil {
			break
		}
		if s.c != nil && !s.c.broken {
			if err := s.c.logout(ctx, c.cfg.RequestTimeout); err != nil {
				errs = append(errs, err)
			}
		}
	}
	_ = c.Close()
	return errors.Join(errs...)
}

func (c *Client) config() *Config { return &c.cfg }
