// Package framebuf reads the body of a length-prefixed frame so that what a peer costs in memory
// follows what it has actually sent, never the length it claims. A listener (the Kafka port, the
// store's port, the in-process store connection) shares one Budget between its connections: a
// frame above FreeBytes is read into fixed-size chunks, each charged to the Budget before it is
// filled, and only once every byte has arrived is the frame copied into one contiguous buffer and
// its chunks handed back. A connection that finds the Budget spent stops reading until another
// frame finishes or its deadline passes; then Read fails and the caller closes the connection.
//
// The two types to know: Budget, the process-wide bound on unfinished frames, and the error
// ErrBudget, which Read returns when a frame could not be admitted before its deadline.
package framebuf

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// FreeBytes is the largest frame read without charging the Budget: such a frame costs no more
// than a connection's read buffer already does, and exempting it keeps small requests (a
// handshake, a metadata request) answered while large unfinished frames hold the whole Budget.
const FreeBytes = 64 << 10

// ChunkBytes is the unit a large frame is buffered and charged in.
const ChunkBytes = 256 << 10

// ErrBudget reports a frame that waited for buffer memory until its deadline.
var ErrBudget = errors.New("framebuf: frame buffer budget exhausted until the read deadline")

// ErrStopped reports a read abandoned because the caller's stop channel closed.
var ErrStopped = errors.New("framebuf: stopped")

// Budget bounds the bytes held by unfinished frames across connections. It is safe for
// concurrent use.
type Budget struct {
	limit int64
	clk   clock.Clock

	mu      sync.Mutex
	used    int64
	refused uint64
	freed   chan struct{} // closed and replaced whenever bytes are released
}

// NewBudget returns a Budget of limit bytes (at least one chunk) whose waits run on clk (nil: the
// wall clock).
func NewBudget(limit int64, clk clock.Clock) *Budget {
	return &Budget{limit: max(limit, ChunkBytes), clk: clock.Or(clk), freed: make(chan struct{})}
}

// Need is what an n-byte frame charges at most; a Budget smaller than Need of the largest
// frame a listener accepts could never admit such a frame.
func Need(n int) int64 {
	if n <= FreeBytes {
		return 0
	}
	return int64((n + ChunkBytes - 1) / ChunkBytes * ChunkBytes)
}

// Limit is the configured bound.
func (b *Budget) Limit() int64 { return b.limit }

// Used is the number of bytes charged now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Refused counts frames that gave up waiting for the Budget.
func (b *Budget) Refused() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// acquire charges n bytes, waiting while the Budget is spent until deadline or stop.
func (b *Budget) acquire(n int64, deadline time.Time, stop <-chan struct{}) error {
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		if timer == nil {
			d := deadline.Sub(b.clk.Now())
			if d <= 0 || deadline.IsZero() {
				b.countRefused()
				return ErrBudget
			}
			timer = b.clk.NewTimer(d)
		}
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
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

var chunkPool = sync.Pool{New: func() any { return new([ChunkBytes]byte) }}

// Read reads an n-byte frame body from r and returns it in a buffer from alloc(n), which is
// called only once all n bytes have arrived (for n up to FreeBytes, before reading). Bytes of a
// larger frame wait in chunks charged to b; when b is spent Read waits for room until deadline
// and then returns ErrBudget. A closed stop ends the wait with ErrStopped. The caller sets r's
// own read deadline; an error from r is returned as it is, io.EOF after a partial read as
// io.ErrUnexpectedEOF.
func (b *Budget) Read(r *bufio.Reader, n int, alloc func(int) []byte, deadline time.Time, stop <-chan struct{}) ([]byte, error) {
	if n <= FreeBytes {
		buf := alloc(n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return buf, eof(err)
		}
		return buf, nil
	}
	var chunks []*[ChunkBytes]byte
	defer func() {
		for _, c := range chunks {
			chunkPool.Put(c)
		}
		if len(chunks) > 0 {
			b.release(int64(len(chunks)) * ChunkBytes)
		}
	}()
	for left := n; left > 0; {
		// A chunk is charged only once a byte of it has arrived: a peer that sends a size and
		// then nothing holds no budget at all.
		if _, err := r.Peek(1); err != nil {
			return nil, eof(err)
		}
		if err := b.acquire(ChunkBytes, deadline, stop); err != nil {
			return nil, err
		}
		c := chunkPool.Get().(*[ChunkBytes]byte)
		chunks = append(chunks, c)
		m := min(left, ChunkBytes)
		if _, err := io.ReadFull(r, c[:m]); err != nil {
			return nil, eof(err)
		}
		left -= m
	}
	buf := alloc(n)
	off := 0
	for _, c := range chunks {
		off += copy(buf[off:], c[:])
	}
	return buf, nil
}

func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
