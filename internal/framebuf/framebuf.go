// Package framebuf reads the body of a length-prefixed frame so that what a peer costs in memory
// follows what it has actually sent, never the length it claims, and so that the frames a
// listener holds at once, arriving or being processed, are bounded. A listener (the Kafka port,
// the store's port, the in-process store connection) shares one Budget between its connections:
// a frame above FreeBytes is read into fixed-size chunks, each charged to the Budget before it is
// filled; once every byte has arrived it is copied into one pooled buffer, and the Budget stays
// charged for that buffer until the caller releases the Frame, after the request was handled. A
// connection that finds the Budget spent stops reading (its peer's sends back up in TCP) until
// another frame is released or its deadline passes; then Read fails and the caller closes the
// connection.
//
// The oldest frame still arriving may take room past the limit while the others hold no more
// than the limit: frames that arrived in part and wait for each other cannot stall the listener,
// one frame of any size is always read, and the charge stays below the limit plus one frame.
//
// The two types to know: Budget, the bound on the frames a listener holds, and Frame, one body
// and its charge, handed back with Release.
package framebuf

import (
	"bufio"
	"errors"
	"io"
	"math/bits"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// FreeBytes is the largest frame read without charging the Budget: such a frame costs no more
// than a connection's read buffer already does, and exempting it keeps small requests (a
// handshake, a metadata request, a heartbeat) answered while large frames hold the whole Budget.
const FreeBytes = 64 << 10

// ChunkBytes is the unit a large frame is buffered and charged in while it arrives.
const ChunkBytes = 256 << 10

// ErrBudget reports a frame that waited for buffer memory until its deadline.
var ErrBudget = errors.New("framebuf: frame buffer budget exhausted until the read deadline")

// ErrStopped reports a read abandoned because the caller's stop channel closed.
var ErrStopped = errors.New("framebuf: stopped")

// Budget bounds the bytes held by a listener's frames, from a large frame's first byte until its
// Frame is released. It is safe for concurrent use.
type Budget struct {
	limit int64
	clk   clock.Clock

	mu      sync.Mutex
	used    int64
	refused uint64
	waiting int
	freed   chan struct{} // closed and replaced whenever a waiter may now find room
	// oldest and newest end the list of frames still arriving, in the order their first byte
	// came; oldest may go past the limit.
	oldest, newest *arrival
}

// arrival is a large frame between its first byte and its last.
type arrival struct {
	prev, next *arrival
	charge     int64
}

// NewBudget returns a Budget of limit bytes (at least one chunk) whose waits run on clk (nil: the
// wall clock).
func NewBudget(limit int64, clk clock.Clock) *Budget {
	return &Budget{limit: max(limit, ChunkBytes), clk: clock.Or(clk), freed: make(chan struct{})}
}

// Limit is the configured bound.
func (b *Budget) Limit() int64 { return b.limit }

// Used is the number of bytes charged now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting is the number of frames waiting for room now.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// Refused counts frames that gave up waiting for the Budget.
func (b *Budget) Refused() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// wakeLocked lets every waiter look again.
func (b *Budget) wakeLocked() {
	close(b.freed)
	b.freed = make(chan struct{})
}

func (b *Budget) startLocked(a *arrival) {
	a.prev = b.newest
	if b.newest != nil {
		b.newest.next = a
	} else {
		b.oldest = a
	}
	b.newest = a
}

// endLocked takes a off the arriving list and hands back n of its charge.
func (b *Budget) endLocked(a *arrival, n int64) {
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		b.oldest = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		b.newest = a.prev
	}
	a.prev, a.next = nil, nil
	b.used -= n
	b.wakeLocked()
}

// acquire charges n bytes to a, waiting while the Budget is spent until deadline or stop.
func (b *Budget) acquire(a *arrival, n int64, deadline time.Time, stop <-chan struct{}) error {
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
			b.mu.Lock()
			b.waiting--
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		if b.used+n <= b.limit || (b.oldest == a && b.used-a.charge <= b.limit) {
			b.used += n
			a.charge += n
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		if timer == nil {
			d := deadline.Sub(b.clk.Now())
			if d <= 0 || deadline.IsZero() {
				b.refused++
				b.mu.Unlock()
				return ErrBudget
			}
			timer = b.clk.NewTimer(d)
			b.waiting++
		}
		b.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C():
			b.countRefused()
			return ErrBudget
		case <-stop:
			return ErrStopped
		}
	}
}

func (b *Budget) countRefused() {
	b.mu.Lock()
	b.refused++
	b.mu.Unlock()
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.wakeLocked()
	b.mu.Unlock()
}

// Frame is one frame read by Read: the caller's head followed by the body. Its buffer and its
// charge stay the frame's until Release.
type Frame struct {
	Body []byte

	b      *Budget
	charge int64
	buf    *[]byte // Body's pooled backing array, or nil when it is not pooled
	class  int
}

// Release hands the frame's buffer back to the pool and its charge back to the Budget; nothing
// may use Body afterwards. Releasing a zero or already released Frame does nothing.
func (f *Frame) Release() {
	if f.b != nil && f.charge > 0 {
		f.b.release(f.charge)
	}
	if f.buf != nil {
		pools[f.class].Put(f.buf)
	}
	*f = Frame{}
}

// Charge is what the frame holds of its Budget: zero for a frame up to FreeBytes.
func (f *Frame) Charge() int64 { return f.charge }

var chunkPool = sync.Pool{New: func() any { return new([ChunkBytes]byte) }}

// Read reads an n-byte frame body from r and returns head followed by it, in a pooled buffer.
// A body of up to FreeBytes is read straight into its buffer and charged nothing. The bytes of a
// larger one wait in chunks charged to b as they arrive, and the frame's buffer is taken only
// once all n are in, so a peer that claims a large size and sends little costs what it sent; the
// frame then holds the buffer's size of b until it is released. When b is spent Read waits for
// room until deadline and then returns ErrBudget; a closed stop ends the wait with ErrStopped. The
// caller sets r's own read deadline; an error from r is returned as it is, io.EOF after a
// partial read as io.ErrUnexpectedEOF. After an error nothing is held.
func (b *Budget) Read(r *bufio.Reader, head []byte, n int, deadline time.Time, stop <-chan struct{}) (Frame, error) {
	if n <= FreeBytes {
		f := newFrame(len(head) + n)
		copy(f.Body, head)
		if _, err := io.ReadFull(r, f.Body[len(head):]); err != nil {
			f.Release()
			return Frame{}, eof(err)
		}
		return f, nil
	}
	var chunks []*[ChunkBytes]byte
	defer func() {
		for _, c := range chunks {
			if c != nil {
				chunkPool.Put(c)
			}
		}
	}()
	// A chunk is charged only once a byte of it has arrived: a peer that sends a size and then
	// nothing holds no budget at all.
	if _, err := r.Peek(1); err != nil {
		return Frame{}, eof(err)
	}
	a := &arrival{}
	b.mu.Lock()
	b.startLocked(a)
	b.mu.Unlock()
	fail := func(err error) (Frame, error) {
		b.mu.Lock()
		b.endLocked(a, a.charge)
		b.mu.Unlock()
		return Frame{}, err
	}
	for left := n; left > 0; {
		if left < n {
			if _, err := r.Peek(1); err != nil {
				return fail(eof(err))
			}
		}
		if err := b.acquire(a, ChunkBytes, deadline, stop); err != nil {
			return fail(err)
		}
		c := chunkPool.Get().(*[ChunkBytes]byte)
		chunks = append(chunks, c)
		m := min(left, ChunkBytes)
		if _, err := io.ReadFull(r, c[:m]); err != nil {
			return fail(eof(err))
		}
		left -= m
	}
	f := newFrame(len(head) + n)
	off := copy(f.Body, head)
	for i, c := range chunks {
		off += copy(f.Body[off:], c[:])
		chunkPool.Put(c)
		chunks[i] = nil
	}
	// The chunks were rounded up to ChunkBytes, the buffer to its size class: from here the
	// frame is charged for the buffer. The difference is taken without waiting, as the bytes
	// are already in.
	f.b, f.charge = b, int64(cap(f.Body))
	b.mu.Lock()
	b.used += f.charge
	b.endLocked(a, a.charge)
	b.mu.Unlock()
	return f, nil
}

func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Buffers come in size classes four to a doubling, from 4 KiB to maxPooled, so that a frame's
// buffer is at most a quarter larger than the frame and a pooled buffer fits the next frame of
// about its size. Larger frames are rare enough to be allocated each time.
const (
	minClassShift  = 12
	maxPooledShift = 26
	maxPooled      = 1 << maxPooledShift
)

var pools [(maxPooledShift-minClassShift)*4 + 1]sync.Pool

// classOf is the size class of an n-byte buffer; classSize is its capacity.
func classOf(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	step := 1 << (e - 3)
	return 1 + (e-minClassShift-1)*4 + (n+step-1)/step - 5
}

func classSize(c int) int {
	if c == 0 {
		return 1 << minClassShift
	}
	e := (c-1)/4 + minClassShift + 1
	return (5 + (c-1)%4) << (e - 3)
}

// newFrame returns a Frame whose Body is n bytes of a pooled buffer, not yet charged.
func newFrame(n int) Frame {
	if n > maxPooled {
		return Frame{Body: make([]byte, n)}
	}
	c := classOf(n)
	p, _ := pools[c].Get().(*[]byte)
	if p == nil {
		b := make([]byte, classSize(c))
		p = &b
	}
	return Frame{Body: (*p)[:n], buf: p, class: c}
}
