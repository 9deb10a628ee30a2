package iggy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Local is a server living in this process that runs each request in the caller's goroutine
// (the embedded store's store.Local). A connection made through Config.Local sends its frames
// through it instead of a socket: the same requests, replies and session rules, without the
// framing, the copies and the goroutine switches of a pipe.
type Local interface {
	// Exchange runs one request (frame, then tail, as they would go on the wire) and returns
	// the reply frame, built in reply's memory when that is large enough.
	Exchange(frame, tail, reply []byte) ([]byte, error)
	// Open reports whether the connection can take a request.
	Open() bool
	Close() error
}

func dialLocal(cfg *Config, addr string) (*conn, error) {
	l, err := cfg.Local()
	if err != nil {
		return nil, fmt.Errorf("%w: local server: %w", ErrUnavailable, err)
	}
	lc := localConn{l}
	c := &conn{
		nc:       lc,
		br:       nil,
		addr:     addr,
		counter:  1,
		wbuf:     make([]byte, 0, 4096),
		lastUsed: time.Now(),
		local:    l,
	}
	c.newClientID()
	return c, nil
}

// exchangeLocal is exchange for a connection made through Config.Local: the request runs in
// this goroutine, so there is no deadline to set and nothing to interrupt.
func (c *conn) exchangeLocal(ctx context.Context, cl *call, req uint64) ([]byte, error) {
	defer func() { c.lastUsed = time.Now() }()
	for {
		c.wbuf = append(append(c.wbuf[:0], c.hdr[:]...), cl.body...)
		buf := &c.rbuf
		if cl.into != nil {
			buf = cl.into
		}
		frame, err := c.local.Exchange(c.wbuf, cl.tail, (*buf)[:0])
		if err != nil {
			c.broken = true
			_ = c.local.Close()
			what := "read"
			if cl.changesState() {
				what = "write (it may or may not have been applied)"
			} else if !cl.idempotent() {
				what = "login"
			}
			return nil, fmt.Errorf("iggy: %s to %s failed: %w: %w", what, c.addr, ErrConnectionLost, err)
		}
		*buf = frame
		body, err := c.decodeReply(req, frame)
		again, err := resendTransient(ctx, cl, err)
		if again {
			continue
		}
		return body, err
	}
}

// localConn stands in for the socket of a local connection, for the code that closes or
// probes one; nothing reads or writes through it.
type localConn struct{ l Local }

var errLocalIO = errors.New("iggy: a local connection has no byte stream")

func (lc localConn) Read([]byte) (int, error)         { return 0, errLocalIO }
func (lc localConn) Write([]byte) (int, error)        { return 0, errLocalIO }
func (lc localConn) Close() error                     { return lc.l.Close() }
func (lc localConn) PeerOpen() bool                   { return lc.l.Open() }
func (lc localConn) LocalAddr() net.Addr              { return localAddr{} }
func (lc localConn) RemoteAddr() net.Addr             { return localAddr{} }
func (lc localConn) SetDeadline(time.Time) error      { return nil }
func (lc localConn) SetReadDeadline(time.Time) error  { return nil }
func (lc localConn) SetWriteDeadline(time.Time) error { return nil }

type localAddr struct{}

func (localAddr) Network() string { return "local" }
func (localAddr) String() string  { return "local" }
