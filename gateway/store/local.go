package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Local is an in-process client connection that runs each request in the caller's goroutine:
// no framing through a pipe, no goroutine to hand the request to and back, no copy of the
// reply (it is built in memory the caller lends). It is served by the same handlers, with the
// same session rules, as an accepted connection, and it is listed among the server's clients.
// The gateway that embeds the store uses it for its own Iggy clients. A Local is used by one
// request at a time; a second caller waits. Batches sent through it are checked as from any
// client except that message checksums are not recomputed (message.ValidateBuilt): the only
// callers are in this process and build their batches with message.Builder.
type Local struct {
	c *conn

	mu      sync.Mutex // held for one request, and by the teardown
	pending []byte     // an eviction, for the next caller; guarded by c.wmu
	tail    []byte     // the batch of the send_messages request running now
	done    sync.Once
}

// ErrLocalClosed reports a request to a Local that was closed, by its owner or by the server.
var ErrLocalClosed = errors.New("store: local connection closed")

// errLocalDropped reports a request the server drops without an answer (an invalid header):
// a lockstep client would wait for it forever.
var errLocalDropped = errors.New("store: request dropped by the server")

// Local opens an in-process connection; Close it when done.
func (s *Server) Local() (*Local, error) {
	l := &Local{}
	c := &conn{s: s, id: 0, addr: "local", local: l}
	l.c = c
	c.lastSeen.Store(s.now().UnixNano())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosing() {
		return nil, errServerClosed
	}
	s.nextClient++
	c.id = s.nextClient
	s.conns[c] = struct{}{}
	s.connWG.Add(1) // done by the teardown, as a served connection's goroutine does
	return l, nil
}

// Exchange runs one request: frame is its header and body, tail (may be empty) the bytes that
// follow on the wire. It returns the reply frame, built in reply's memory when that is large
// enough; the store keeps no reference to it, nor to frame and tail. A batch sent as the tail
// of a send_messages request is appended from where it lies, and its header is stamped there
// (partition, offsets, timestamp), as in a request frame read from a socket. After an
// eviction the eviction frame is the reply and the connection is closed.
func (l *Local) Exchange(frame, tail, reply []byte) (out []byte, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.c
	s := c.s
	if c.closed.Load() {
		if p := l.takePending(); p != nil {
			return append(reply[:0], p...), nil
		}
		return nil, ErrLocalClosed
	}
	defer func() {
		if r := recover(); r != nil {
			s.panics.Add(1)
			s.log.Error("local connection handler panicked; closing the connection",
				"client", c.id, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.out = nil
			c.closeNow()
			out, err = nil, ErrLocalClosed
		}
	}()
	size := len(frame) + len(tail)
	if len(frame) < wire.HeaderSize || size > wire.MaxFrameSize {
		return nil, fmt.Errorf("%w: local request of %d bytes", wire.ErrFrame, size)
	}
	s.readBytes.Add(uint64(size))
	c.lastSeen.Store(s.now().UnixNano())
	c.seen.Store(true)
	var h wire.RequestHeader
	if err := h.Decode(frame); err != nil {
		c.closeNow()
		return nil, fmt.Errorf("%w: %w", wire.ErrFrame, err)
	}
	if err := h.Validate(); err != nil {
		return nil, errLocalDropped
	}
	req := frame
	switch {
	case len(tail) == 0:
	case h.Operation == wire.OpSendMessages && h.RequestChecksum.IsZero():
		// The batch stays where the caller built it: sendMessages takes it from l.tail.
		l.tail = tail
	default:
		c.frame = append(append(c.frame[:0], frame...), tail...)
		req = c.frame
	}
	c.out = reply[:0]
	open := c.handle(&h, req[wire.HeaderSize:])
	out, c.out, l.tail = c.out, nil, nil
	if cap(c.frame) > 8<<20 {
		c.frame = nil
	}
	if !open {
		// Evicted: the eviction frame is the answer.
		if p := l.takePending(); p != nil {
			return append(out[:0], p...), nil
		}
		return nil, ErrLocalClosed
	}
	s.writtenBytes.Add(uint64(len(out)))
	return out, nil
}

// Open reports whether the connection can take a request.
func (l *Local) Open() bool { return !l.c.closed.Load() }

// Close ends the connection and its session. It is safe to call more than once.
func (l *Local) Close() error {
	l.c.closeNow()
	return nil
}

// write keeps what the store writes outside a reply (an eviction) for the next Exchange; the
// caller holds c.wmu.
func (l *Local) write(b []byte) {
	l.pending = append(l.pending[:0], b...)
}

func (l *Local) takePending() []byte {
	l.c.wmu.Lock()
	defer l.c.wmu.Unlock()
	p := l.pending
	l.pending = nil
	return p
}

// teardown ends the session once no request runs, as a served connection's goroutine does when
// it stops: called (once) when the connection closes, from any goroutine, so it waits for the
// request in flight in its own goroutine.
func (l *Local) teardown() {
	l.done.Do(func() {
		go func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			s := l.c.s
			s.mu.Lock()
			if s.isClosing() {
				l.c.sess = nil // as conn.serve: a shutdown is no Leave
			}
			s.endSessionLocked(l.c)
			delete(s.conns, l.c)
			s.mu.Unlock()
			s.connWG.Done()
		}()
	})
}
