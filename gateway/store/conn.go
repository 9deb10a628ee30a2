package store

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// session is one login. A connection holds at most one; Server.mu guards
// the fields.
type session struct {
	number uint64
	userID uint32
	client wire.Uint128
	groups []*group
}

// conn is one client connection. Its goroutine reads a request, answers it
// and only then reads the next, so the buffers below are reused without
// locks; wmu only orders replies against an eviction sent by the staleness
// sweeper.
type conn struct {
	s    *Server
	nc   net.Conn
	br   *bufio.Reader
	id   uint32
	addr string

	head   [wire.HeaderSize]byte // the current request's header, as it arrives
	frame  []byte                // a request frame put together in memory (Local.Exchange)
	budget *framebuf.Budget      // charged for large frames until they are handled
	out    []byte                // the reply being built: header placeholder then body

	wmu      sync.Mutex
	closed   atomic.Bool
	lastSeen atomic.Int64 // unix nanoseconds of the last request
	seen     atomic.Bool  // a request arrived (get_clients lists only these)

	sess *session // guarded by Server.mu

	local *Local // set for an in-process connection without a socket (local.go)
}

// Outcomes a handler can return besides nil (success with c.out as the reply
// body) and a wire.Code (reply status, empty body).
type evictError struct{ reason wire.EvictionReason }

func (e evictError) Error() string { return "evicted: " + e.reason.String() }

var errDrop = errors.New("request dropped")

func (s *Server) startConn(nc net.Conn) *conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &conn{
		s:    s,
		nc:   nc,
		br:   bufio.NewReaderSize(nc, 64<<10),
		addr: nc.RemoteAddr().String(),
		out:  make([]byte, 0, 64<<10),
	}
	c.budget = s.netBudget
	if _, ok := nc.(*memConn); ok {
		c.budget = s.memBudget
	}
	c.lastSeen.Store(s.now().UnixNano())
	s.mu.Lock()
	if s.isClosing() {
		s.mu.Unlock()
		_ = nc.Close()
		return nil
	}
	s.nextClient++
	c.id = s.nextClient
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	go c.serve()
	return c
}

func (c *conn) closeNow() {
	if c.closed.CompareAndSwap(false, true) {
		if c.local != nil {
			c.local.teardown()
			return
		}
		_ = c.nc.Close()
	}
}

func (c *conn) serve() {
	s := c.s
	defer s.connWG.Done()
	defer func() {
		if r := recover(); r != nil {
			s.panics.Add(1)
			s.log.Error("connection handler panicked; closing the connection",
				"client", c.id, "addr", c.addr, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		c.closeNow()
		s.mu.Lock()
		if s.isClosing() {
			// The server going down is no Leave: the session's memberships stay in the
			// metadata, as the real server keeps them across a restart.
			c.sess = nil
		}
		s.endSessionLocked(c)
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	for {
		f, err := c.readFrame()
		if err != nil {
			c.frameFailed(err)
			return
		}
		if !c.serveFrame(f.Body) {
			f.Release()
			return
		}
		f.Release()
	}
}

// serveFrame answers one request frame and reports whether the connection stays open. Nothing
// may keep a reference into frame once it returns: the frame's buffer goes back to its pool.
func (c *conn) serveFrame(frame []byte) bool {
	s := c.s
	s.readBytes.Add(uint64(len(frame)))
	c.lastSeen.Store(s.now().UnixNano())
	c.seen.Store(true)
	var h wire.RequestHeader
	if err := h.Decode(frame); err != nil {
		s.log.Debug("closing connection: not a request", "client", c.id, "err", err)
		return false
	}
	if err := h.Validate(); err != nil {
		// The official server drops such a request without a word.
		return true
	}
	return c.handle(&h, frame[wire.HeaderSize:])
}

// handle answers one request and reports whether the connection stays open.
func (c *conn) handle(h *wire.RequestHeader, body []byte) bool {
	framed := h.Operation.ReplyFramed()
	c.out = append(c.out[:0], make([]byte, wire.HeaderSize)...)
	if framed {
		c.out = wire.AppendResultOK(c.out)
	}
	var err error
	if !h.RequestChecksum.IsZero() &&
		(h.RequestChecksum.Hi != 0 || h.RequestChecksum.Lo != xxh3.Hash(body)) {
		err = wire.InvalidFormat
	} else {
		err = c.dispatch(h, body)
	}
	status := wire.OK
	switch e := err.(type) {
	case nil:
	case evictError:
		c.evictWith(h.Client, e.reason)
		return false
	case wire.Code:
		status = e
	default:
		if errors.Is(err, errDrop) {
			return true
		}
		var code wire.Code
		if errors.As(err, &code) {
			status = code
		} else {
			c.s.log.Error("request failed", "client", c.id, "operation", h.Operation, "code", h.Code, "err", err)
			status = wire.UnspecifiedError
		}
	}
	if status != wire.OK {
		c.out = c.out[:wire.HeaderSize]
	}
	rh := wire.ReplyTo(h, status)
	rh.Encode((*[wire.HeaderSize]byte)(c.out[:wire.HeaderSize]))
	wire.PutFrameSize(c.out)
	if c.local != nil {
		return true // the reply stays in c.out for Local.Exchange
	}
	if err := c.write(c.out); err != nil {
		return false
	}
	if cap(c.out) > 8<<20 {
		c.out = make([]byte, 0, 64<<10)
	}
	return true
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.local != nil {
		c.local.write(b)
		return nil
	}
	if c.closed.Load() {
		return net.ErrClosed
	}
	_, err := c.nc.Write(b)
	if err != nil {
		c.closeNow()
		return err
	}
	c.s.writtenBytes.Add(uint64(len(b)))
	return nil
}

// evictWith sends an eviction and closes the connection.
func (c *conn) evictWith(client wire.Uint128, reason wire.EvictionReason) {
	if client.IsZero() {
		client = wire.Uint128{Lo: 1}
	}
	eh := wire.EvictionHeader{Client: client, Reason: reason}
	if reason == wire.EvictIncompatibleProtocol {
		eh.ServerProtocolVersion = wire.ProtocolVersion
		eh.ServerProtocolVersionMin = wire.MinCompatibleVersion(wire.ProtocolVersion)
	}
	var buf [wire.HeaderSize]byte
	eh.Encode(&buf)
	_ = c.write(buf[:])
	c.closeNow()
}

func (c *conn) session() *session {
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	return c.sess
}

// dispatch applies the session rules (protocol 5.3) and calls the handler.
func (c *conn) dispatch(h *wire.RequestHeader, body []byte) error {
	switch h.Operation {
	case wire.OpRegister:
		return c.register(h, body)
	case wire.OpLogout:
		return c.logout()
	case wire.OpNonReplicated:
		switch h.Code {
		case wire.CmdPing:
			return nil
		case wire.CmdLoginUser, wire.CmdLoginWithPersonalAccessToken:
			return evictError{wire.EvictMalformedLogin}
		}
		sess := c.session()
		if sess == nil {
			return wire.Unauthenticated
		}
		fn, ok := readHandlers[h.Code]
		if !ok {
			switch {
			case !h.Code.Known():
				return wire.InvalidCommand
			case !h.Code.NonReplicated():
				return wire.FeatureUnavailable
			}
			return nil
		}
		return fn(c, sess, body)
	}
	sess := c.session()
	if sess == nil {
		return evictError{wire.EvictNoSession}
	}
	if h.Session != sess.number {
		return evictError{wire.EvictSessionError}
	}
	cmd, ok := wire.CommandFor(h.Operation, 0)
	if !ok {
		return errDrop
	}
	fn, ok := writeHandlers[cmd]
	if !ok {
		return wire.FeatureUnavailable
	}
	return fn(c, sess, body)
}

type handlerFunc func(c *conn, sess *session, body []byte) error

// readHandlers serve non-replicated codes; writeHandlers serve the
// operations a client may send, keyed by their command code. Both are filled
// in init functions next to the handlers.
var (
	readHandlers  = map[wire.Command]handlerFunc{}
	writeHandlers = map[wire.Command]handlerFunc{}
)

// endSessionLocked ends the connection's session, leaving every consumer
// group it joined (protocol 5.2, 5.5). The caller holds Server.mu.
func (s *Server) endSessionLocked(c *conn) {
	sess := c.sess
	if sess == nil {
		return
	}
	if len(sess.groups) > 0 {
		s.offDirty.Store(true)
	}
	for len(sess.groups) > 0 {
		sess.groups[0].leave(sess)
	}
	c.sess = nil
}

func (c *conn) logout() error {
	c.s.mu.Lock()
	c.s.endSessionLocked(c)
	c.s.mu.Unlock()
	return nil
}
