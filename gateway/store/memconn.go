package store

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Dial opens an in-process connection to the server: the returned end is
// served exactly as an accepted TCP connection is (same session rules, same
// teardown when either end closes), but bytes move through memory instead of
// the kernel's loopback. It is meant for a client living in the same process,
// such as the gateway's own Iggy client. The connection never uses TLS.
func (s *Server) Dial(ctx context.Context) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	client, server := memPipe()
	if s.startConn(server) == nil {
		_ = client.Close()
		return nil, errServerClosed
	}
	return client, nil
}

var errServerClosed = errors.New("store: server closed")

// memQueueLimit bounds the unread bytes of one direction, as a socket buffer
// does: a writer whose peer stops reading blocks instead of growing memory
// without end. It is well above a typical batch so lockstep requests and
// replies never wait on it.
const memQueueLimit = 4 << 20

// memLendMin is the size from which a write is lent to the reader instead of
// copied into the queue: the reader copies straight out of the writer's
// memory, one copy instead of two, and the writer waits until it has.
// Smaller writes (headers, acknowledgements, evictions) are queued so that
// they never wait on the peer.
const memLendMin = 64 << 10

// memPipe returns the two ends of a full-duplex in-memory connection. Unlike
// net.Pipe it buffers small writes: one returns once its bytes are queued, so
// a reply (or an eviction) can be written while the peer is not reading, as a
// socket allows. Large writes wait for the reader, as a socket's do once its
// buffer is full.
func memPipe() (a, b *memConn) {
	ab, ba := newMemQueue(), newMemQueue()
	a = &memConn{in: ba, out: ab, closed: make(chan struct{})}
	b = &memConn{in: ab, out: ba, closed: make(chan struct{})}
	a.rd.init()
	a.wd.init()
	b.rd.init()
	b.wd.init()
	return a, b
}

// memQueue is one direction of a memPipe.
type memQueue struct {
	mu  sync.Mutex
	buf []byte // unread bytes are buf[off:]
	off int
	eof bool // the writing end closed: readers get io.EOF once drained
	// lent is the unread rest of a large write, read after buf; the
	// writer waits until it is nil.
	lent []byte
	gone bool // the reading end closed: writes fail

	// data and space carry a wake-up to a blocked reader or writer; one slot
	// suffices because a waiter re-checks the state after every wake-up and
	// passes the signal on when it leaves something for another waiter.
	data  chan struct{}
	space chan struct{}
}

func newMemQueue() *memQueue {
	return &memQueue{data: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// memConn is one end of a memPipe. It implements net.Conn.
type memConn struct {
	in, out   *memQueue
	rd, wd    deadline
	closeOnce sync.Once
	closed    chan struct{}
	wmu       sync.Mutex // keeps concurrent writes whole, as a socket does
}

func (c *memConn) Read(p []byte) (int, error) {
	q := c.in
	for {
		select {
		case <-c.closed:
			return 0, net.ErrClosed
		default:
		}
		select {
		case <-c.rd.wait():
			return 0, os.ErrDeadlineExceeded
		default:
		}
		if len(p) == 0 {
			return 0, nil
		}
		q.mu.Lock()
		if len(q.buf) > q.off {
			n := copy(p, q.buf[q.off:])
			q.off += n
			left := len(q.buf) > q.off
			if !left {
				q.buf, q.off = q.buf[:0], 0
			}
			q.mu.Unlock()
			wake(q.space)
			if left {
				wake(q.data)
			}
			return n, nil
		}
		if len(q.lent) > 0 {
			n := copy(p, q.lent)
			q.lent = q.lent[n:]
			left := len(q.lent) > 0
			if !left {
				q.lent = nil
			}
			q.mu.Unlock()
			if left {
				wake(q.data)
			} else {
				wake(q.space)
			}
			return n, nil
		}
		eof := q.eof
		q.mu.Unlock()
		if eof {
			wake(q.data)
			return 0, io.EOF
		}
		select {
		case <-q.data:
		case <-c.closed:
		case <-c.rd.wait():
		}
	}
}

func (c *memConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(b) >= memLendMin {
		return c.lend(b)
	}
	q := c.out
	written := 0
	for {
		select {
		case <-c.closed:
			return written, net.ErrClosed
		default:
		}
		select {
		case <-c.wd.wait():
			return written, os.ErrDeadlineExceeded
		default:
		}
		q.mu.Lock()
		if q.gone {
			q.mu.Unlock()
			return written, io.ErrClosedPipe
		}
		if room := memQueueLimit - (len(q.buf) - q.off); room > 0 {
			if q.off > 0 && q.off >= len(q.buf)/2 {
				// Slide the unread tail down rather than growing forever.
				q.buf = q.buf[:copy(q.buf, q.buf[q.off:])]
				q.off = 0
			}
			n := min(room, len(b)-written)
			q.buf = append(q.buf, b[written:written+n]...)
			written += n
			q.mu.Unlock()
			wake(q.data)
			if written == len(b) {
				return written, nil
			}
			continue
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-c.closed:
		case <-c.wd.wait():
		}
	}
}

// lend hands b to the reader and waits until it has been read, or the
// write fails; the reader may have taken part of it by then.
func (c *memConn) lend(b []byte) (int, error) {
	q := c.out
	if isClosed(c.closed) {
		return 0, net.ErrClosed
	}
	if isClosed(c.wd.wait()) {
		return 0, os.ErrDeadlineExceeded
	}
	q.mu.Lock()
	if q.gone {
		q.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	q.lent = b
	q.mu.Unlock()
	wake(q.data)
	for {
		select {
		case <-q.space:
		case <-c.closed:
		case <-c.wd.wait():
		}
		q.mu.Lock()
		var err error
		switch {
		case q.lent == nil:
		case q.gone:
			err = io.ErrClosedPipe
		case isClosed(c.closed):
			err = net.ErrClosed
		case isClosed(c.wd.wait()):
			err = os.ErrDeadlineExceeded
		default:
			q.mu.Unlock()
			continue
		}
		n := len(b) - len(q.lent)
		q.lent = nil
		q.mu.Unlock()
		return n, err
	}
}

// Close ends both directions: the peer reads what was already written and
// then io.EOF, its writes fail, and blocked calls on this end return
// net.ErrClosed.
func (c *memConn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		close(c.closed)
		c.out.mu.Lock()
		c.out.eof = true
		c.out.mu.Unlock()
		wake(c.out.data)
		c.in.mu.Lock()
		c.in.gone = true
		c.in.buf, c.in.off = nil, 0
		c.in.mu.Unlock()
		wake(c.in.space)
	})
	if !first {
		return net.ErrClosed
	}
	return nil
}

// PeerOpen reports whether the peer is still open and has sent nothing
// unread, the check a pooled client makes before reusing a connection.
func (c *memConn) PeerOpen() bool {
	if isClosed(c.closed) {
		return false
	}
	c.in.mu.Lock()
	open := !c.in.eof && len(c.in.buf) == c.in.off && c.in.lent == nil
	c.in.mu.Unlock()
	if !open {
		return false
	}
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return !c.out.gone
}

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

func (c *memConn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "in-process" }

// deadline is a settable point in time whose channel closes when it passes.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	ch    chan struct{} // closed while the deadline has passed
}

func (d *deadline) init() { d.ch = make(chan struct{}) }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		// The timer fired or is firing: its channel is (being) closed, and
		// the new deadline needs a fresh one.
		<-d.ch
	}
	d.timer = nil
	expired := isClosed(d.ch)
	if t.IsZero() {
		if expired {
			d.ch = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if expired {
			d.ch = make(chan struct{})
		}
		ch := d.ch
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !expired {
		close(d.ch)
	}
}

func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
