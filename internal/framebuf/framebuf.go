// Package framebuf reads the body of a length-prefixed frame so that what a peer costs in memory
// follows what it has actually sent, never the length it claims, and so that the frames a
// listener holds at once, arriving or being processed, are bounded. A listener (the Kafka port,
// the store's port) shares one Budget between its connections: a frame above FreeBytes is read
// into chunks of ChunkBytes, each charged to the Budget before it is filled, so a frame holds
// what its peer sent, however large the size it claims. Once half of it has arrived (at once, for
// a frame no larger than a chunk) it moves into one buffer of its size class, charged before it
// is taken, and the rest is read straight into that buffer: a frame holds at most twice what its
// peer sent (and its size class's rounding, a quarter at most), and the buffer stays charged
// until the caller releases the Frame, after the request was handled. Chunks and buffers are reused, so that a busy listener
// makes little garbage. A connection that finds the Budget spent stops reading
// (its peer's sends back up in TCP) until another frame is released. Its read deadline counts
// the wait only while frames still arriving share in spending the Budget (peers too slow to
// finish what they started); a wait for frames being handled is the listener's own backlog and
// moves the deadline on. When the deadline passes Read fails and the caller closes the
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

// ChunkBytes is the unit a frame above FreeBytes is read and charged in while it arrives.
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

	mu       sync.Mutex
	used     int64
	arriving int64 // the part of used held by frames still arriving
	// progress counts frames that finished arriving or were released after handling: while it
	// moves, the listener is getting through its frames.
	progress uint64
	refused  uint64
	waiting  int
	freed    chan struct{} // closed and replaced whenever a waiter may now find room
	// oldest and newest end the list of frames still arriving, in the order their first byte
	// came; oldest may go past the limit.
	oldest, newest *arrival
	// free holds buffers of each size class for later frames, idle bytes in all.
	free [numClasses][]*[]byte
	idle int64
}

// arrival is a large frame between its first byte and its last.
type arrival struct {
	prev, next *arrival
	charge     int64
}

// NewBudget returns a Budget of limit bytes (at least ChunkBytes) whose waits run on clk (nil: the
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

// endLocked takes a off the arriving list; release hands its charge back too, else the charge
// goes on to the frame.
func (b *Budget) endLocked(a *arrival, release bool) {
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
	b.arriving -= a.charge
	if release {
		b.used -= a.charge
	} else {
		b.progress++
	}
	b.wakeLocked()
}

// acquire charges n bytes to a, waiting while the Budget is spent until *deadline or stop. Only
// the time since the listener last got through a frame (one finished arriving or was released)
// counts against the deadline, and none while the frames being handled leave no room by
// themselves: then the listener is behind, not the peer. So a wait runs into its deadline only
// when frames that arrived in part go no further; the time it is excused is added to *deadline.
func (b *Budget) acquire(a *arrival, n int64, deadline *time.Time, stop <-chan struct{}) error {
	var timer clock.Timer
	waiting := false
	since := b.clk.Now()
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if waiting {
			b.mu.Lock()
			b.waiting--
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		if b.used+n <= b.limit || (b.oldest == a && b.used-a.charge <= b.limit) {
			b.used += n
			b.arriving += n
			a.charge += n
			b.mu.Unlock()
			return nil
		}
		backlog := b.used-b.arriving+n > b.limit
		freed, progress := b.freed, b.progress
		if !waiting {
			waiting = true
			b.waiting++
		}
		b.mu.Unlock()
		now := b.clk.Now()
		var expired <-chan time.Time
		if !backlog {
			d := deadline.Sub(now)
			if d <= 0 || deadline.IsZero() {
				b.countRefused()
				return ErrBudget
			}
			if timer != nil {
				timer.Stop()
			}
			timer = b.clk.NewTimer(d)
			expired = timer.C()
		}
		select {
		case <-freed:
		case <-expired:
		case <-stop:
			return ErrStopped
		}
		b.mu.Lock()
		moved := b.progress != progress
		b.mu.Unlock()
		if backlog || moved {
			woke := b.clk.Now()
			*deadline = deadline.Add(woke.Sub(since))
			since = woke
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
	b.progress++
	b.wakeLocked()
	b.mu.Unlock()
}

// Frame is one frame read by Read: the caller's head followed by the body. Its buffer and its
// charge stay the frame's until Release.
type Frame struct {
	Body []byte

	b      *Budget
	charge int64
	buf    *[]byte // Body's reusable backing array, or nil when it is not to be reused
	class  int
}

// Release hands the frame's buffer back for reuse and its charge back to the Budget; nothing
// may use Body afterwards. Releasing a zero or already released Frame does nothing.
func (f *Frame) Release() {
	if f.charge > 0 {
		f.b.release(f.charge)
	}
	if f.buf != nil {
		f.b.put(f.class, f.buf)
	}
	*f = Frame{}
}

// Charge is what the frame holds of its Budget: zero for a frame up to FreeBytes.
func (f *Frame) Charge() int64 { return f.charge }

// Conn is where Read moves the read deadline when it excuses a wait (acquire); a net.Conn is one.
type Conn interface {
	SetReadDeadline(time.Time) error
}

// Read reads an n-byte frame body from r and returns head followed by it, in a pooled buffer.
// A body of up to FreeBytes is read straight into its buffer and charged nothing. A larger one is
// read into a buffer that grows as its bytes arrive (the package doc), each buffer charged to b
// before it is taken, and the frame holds its final buffer's size of b until it is released.
// When b is spent Read waits for room until deadline and then returns ErrBudget; a closed stop
// ends the wait with ErrStopped. Time spent waiting for frames being handled does not count: it
// moves deadline on, and Read sets conn's read deadline (when conn is not nil) to match. The
// caller sets conn's deadline to begin with; an error from r is returned as it is, io.EOF after
// a partial read as io.ErrUnexpectedEOF. After an error nothing is held.
func (b *Budget) Read(r *bufio.Reader, conn Conn, head []byte, n int, deadline time.Time, stop <-chan struct{}) (Frame, error) {
	total := len(head) + n
	if n <= FreeBytes {
		f := b.newFrame(total)
		copy(f.Body, head)
		if _, err := io.ReadFull(r, f.Body[len(head):]); err != nil {
			f.Release()
			return Frame{}, eof(err)
		}
		return f, nil
	}
	// Room is taken only once a byte that needs it has arrived: a peer that sends a size and
	// then nothing holds no budget at all.
	if _, err := r.Peek(1); err != nil {
		return Frame{}, eof(err)
	}
	a := &arrival{}
	b.mu.Lock()
	b.startLocked(a)
	b.mu.Unlock()
	var (
		chunks []*[]byte
		f      Frame
	)
	fail := func(err error) (Frame, error) {
		for _, c := range chunks {
			b.put(chunkClass, c)
		}
		if f.buf != nil {
			b.put(f.class, f.buf)
		}
		b.mu.Lock()
		b.endLocked(a, true)
		b.mu.Unlock()
		return Frame{}, err
	}
	size := classSize(classOf(total))
	for got := 0; ; {
		if got > 0 && got < n {
			if _, err := r.Peek(1); err != nil {
				return fail(eof(err))
			}
		}
		if got >= n/2 || size <= ChunkBytes {
			// Half the frame is in, or its buffer costs no more than a chunk: the rest is
			// read straight into the frame's own buffer.
			if err := b.wait(a, int64(size), &deadline, conn, stop); err != nil {
				return fail(err)
			}
			f = b.newFrame(total)
			off := copy(f.Body, head)
			for _, c := range chunks {
				off += copy(f.Body[off:], *c)
				b.put(chunkClass, c)
			}
			held := int64(len(chunks)) * ChunkBytes
			chunks = nil
			b.mu.Lock()
			a.charge -= held
			b.used -= held
			b.arriving -= held
			b.wakeLocked()
			b.mu.Unlock()
			if _, err := io.ReadFull(r, f.Body[off:]); err != nil {
				return fail(eof(err))
			}
			break
		}
		if err := b.wait(a, ChunkBytes, &deadline, conn, stop); err != nil {
			return fail(err)
		}
		c := b.get(chunkClass)
		chunks = append(chunks, c)
		m, err := io.ReadFull(r, (*c)[:min(n-got, ChunkBytes)])
		got += m
		if err != nil {
			return fail(eof(err))
		}
	}
	f.charge = a.charge
	b.mu.Lock()
	b.endLocked(a, false)
	b.mu.Unlock()
	return f, nil
}

// wait charges n bytes to a (acquire) and, when the wait moved the deadline on, moves conn's
// read deadline with it.
func (b *Budget) wait(a *arrival, n int64, deadline *time.Time, conn Conn, stop <-chan struct{}) error {
	was := *deadline
	if err := b.acquire(a, n, deadline, stop); err != nil {
		return err
	}
	if *deadline != was && conn != nil {
		// Set before stop is looked at: a caller that closes stop and then sets its own
		// deadline to interrupt the read overrides this one.
		_ = conn.SetReadDeadline(*deadline)
		select {
		case <-stop:
			return ErrStopped
		default:
		}
	}
	return nil
}

func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Buffers come in size classes four to a doubling, from 4 KiB to maxPooled, so that a frame's
// buffer is at most a quarter larger than the frame and a reused buffer fits the next frame of
// about its size. Larger frames are rare enough to be allocated each time. Buffers of up to
// twice FreeBytes are kept in a sync.Pool each. Larger ones, and the chunks, wait for their next
// frame in their Budget's free lists, which hold at most a quarter of its limit: a sync.Pool
// keeps what the busiest recent moment took, as much again as the Budget bounds, while a buffer
// dropped instead of reused is garbage the collector lets the heap grow by before it runs.
const (
	minClassShift  = 12
	maxPooledShift = 26
	maxPooled      = 1 << maxPooledShift
	numClasses     = (maxPooledShift-minClassShift)*4 + 1
)

var (
	pools      [numClasses]sync.Pool
	chunkClass = classOf(ChunkBytes)
)

// get returns a buffer of class c, reused when one is free.
func (b *Budget) get(c int) *[]byte {
	if classSize(c) <= 2*FreeBytes {
		if p, _ := pools[c].Get().(*[]byte); p != nil {
			return p
		}
	} else {
		b.mu.Lock()
		free := b.free[c]
		if k := len(free); k > 0 {
			p := free[k-1]
			free[k-1] = nil
			b.free[c] = free[:k-1]
			b.idle -= int64(cap(*p))
			b.mu.Unlock()
			return p
		}
		b.mu.Unlock()
	}
	buf := make([]byte, classSize(c))
	return &buf
}

// put keeps p, of class c, for a later frame. When the free lists are full it makes room by
// dropping buffers of other classes, the class holding the most first: the frames a client sends
// now are likely the size of the next ones, and buffers of a size no longer sent would otherwise
// hold the room, so that every frame of the new size was allocated (and zeroed) anew: a producer
// sending 2.5 to 3 MiB requests after a few of 1 MiB had 3.8% of the gateway's samples there.
func (b *Budget) put(c int, p *[]byte) {
	if classSize(c) <= 2*FreeBytes {
		pools[c].Put(p)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	size := int64(cap(*p))
	for b.idle+size > b.limit/4 && b.dropOtherLocked(c) {
	}
	if b.idle+size <= b.limit/4 {
		b.free[c] = append(b.free[c], p)
		b.idle += size
	}
}

// dropOtherLocked drops one free buffer of the class other than c that holds the most bytes;
// false when only c has any.
func (b *Budget) dropOtherLocked(c int) bool {
	most, held := -1, int64(0)
	for k := range b.free {
		if k == c || len(b.free[k]) == 0 {
			continue
		}
		if h := int64(len(b.free[k])) * int64(classSize(k)); h > held {
			most, held = k, h
		}
	}
	if most < 0 {
		return false
	}
	free := b.free[most]
	last := len(free) - 1
	b.idle -= int64(cap(*free[last]))
	free[last] = nil
	b.free[most] = free[:last]
	return true
}

// Idle is the number of bytes the free lists keep for later frames.
func (b *Budget) Idle() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.idle
}

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

// newFrame returns a Frame whose Body is n bytes of a buffer of n's size class, not yet charged.
func (b *Budget) newFrame(n int) Frame {
	c := classOf(n)
	if n > maxPooled {
		return Frame{Body: make([]byte, n, classSize(c))}
	}
	p := b.get(c)
	return Frame{Body: (*p)[:n], buf: p, class: c, b: b}
}
