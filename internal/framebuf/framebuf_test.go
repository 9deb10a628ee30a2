package framebuf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func read(b *Budget, data []byte, head []byte, n int) (Frame, error) {
	return b.Read(bufio.NewReader(bytes.NewReader(data)), nil, head, n, time.Now().Add(time.Second), nil)
}

func used(b *Budget, want int64) func() error {
	return func() error { return checkfor.True(b.Used() == want, "%d charged, want %d", b.Used(), want) }
}

func TestReadAssemblesChunks(t *testing.T) {
	b := NewBudget(4*ChunkBytes, nil)
	want := patterned(2*ChunkBytes + 123)
	f, err := read(b, want, []byte("head"), len(want))
	if err != nil || !bytes.Equal(f.Body, append([]byte("head"), want...)) {
		t.Fatalf("read %d bytes, err %v", len(f.Body), err)
	}
	f.Release()
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged", b.Used())
	}
}

func TestChargeHeldUntilRelease(t *testing.T) {
	b := NewBudget(8*ChunkBytes, nil)
	n := 3*ChunkBytes + 5
	f, err := read(b, patterned(n), nil, n)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Used(); got != f.Charge() || got < int64(n) || got > int64(n)*5/4 {
		t.Fatalf("a held frame of %d bytes charges %d (frame says %d)", n, got, f.Charge())
	}
	f.Release()
	f.Release()
	if b.Used() != 0 {
		t.Fatalf("%d bytes charged after release", b.Used())
	}
	small, err := read(b, patterned(FreeBytes), nil, FreeBytes)
	if err != nil || small.Charge() != 0 || b.Used() != 0 {
		t.Fatalf("a frame of FreeBytes: err %v, charge %d, used %d", err, small.Charge(), b.Used())
	}
	small.Release()
}

func TestReadCostsWhatArrived(t *testing.T) {
	b := NewBudget(64*ChunkBytes, nil)
	// A claimed size with no byte of the body holds nothing.
	if _, err := read(b, nil, nil, 100<<20); !errors.Is(err, io.ErrUnexpectedEOF) || b.Used() != 0 {
		t.Fatalf("claim with no body: err %v, %d charged", err, b.Used())
	}
	// Bytes that arrived are held in whole chunks until a chunk boundary at or past half the
	// claim, and in the frame's own buffer from there: never much more than twice what was sent.
	for _, c := range []struct{ claim, sent int }{
		{100 << 20, 1}, {100 << 20, ChunkBytes - 1}, {100 << 20, ChunkBytes + 1}, {100 << 20, 5*ChunkBytes + 3},
		{8 * ChunkBytes, 4 * ChunkBytes}, {8 * ChunkBytes, 4*ChunkBytes + 1}, {8*ChunkBytes + 7, 4*ChunkBytes + 4},
		{ChunkBytes, 10},
	} {
		want := int64((c.sent + ChunkBytes - 1) / ChunkBytes * ChunkBytes)
		if full := c.sent / ChunkBytes * ChunkBytes; (full >= c.claim/2 && c.sent > full) || classSize(classOf(c.claim)) <= ChunkBytes {
			want = int64(classSize(classOf(c.claim)))
		}
		if want > max(ChunkBytes, int64(c.sent)*5/2) {
			t.Fatalf("%d of %d sent: %d would be held", c.sent, c.claim, want)
		}
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := b.Read(bufio.NewReaderSize(pr, 4096), nil, nil, c.claim, time.Now().Add(10*time.Second), nil)
			done <- err
		}()
		if _, err := pw.Write(make([]byte, c.sent)); err != nil {
			t.Fatal(err)
		}
		checkfor.Eventually(t, 2*time.Second, "bytes read", func() error {
			return checkfor.True(b.Used() == want, "%d charged for %d bytes sent of %d, want %d", b.Used(), c.sent, c.claim, want)
		})
		pw.Close()
		if err := <-done; !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after %d bytes: %v", c.sent, err)
		}
		if b.Used() != 0 {
			t.Fatalf("%d bytes still charged after a failed read", b.Used())
		}
	}
}

func TestOversizeFrameReadAlone(t *testing.T) {
	b := NewBudget(2*ChunkBytes, nil)
	want := patterned(10 * ChunkBytes)
	f, err := read(b, want, nil, len(want))
	if err != nil || !bytes.Equal(f.Body, want) {
		t.Fatalf("a frame five times the budget: err %v", err)
	}
	if b.Used() <= b.Limit() {
		t.Fatalf("charged %d for a frame above the %d limit", b.Used(), b.Limit())
	}
	// While it is held the next large frame waits for it, however small.
	next := make(chan error, 1)
	go func() {
		g, err := read(b, patterned(FreeBytes+1), nil, FreeBytes+1)
		g.Release()
		next <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "the next frame waiting", func() error {
		return checkfor.True(len(next) == 0 && b.Used() == f.Charge(), "next done %v, %d charged", len(next) == 1, b.Used())
	})
	select {
	case err := <-next:
		t.Fatalf("read beside an oversize frame: %v", err)
	default:
	}
	f.Release()
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 2*time.Second, "all released", used(b, 0))
}

// feed is the writing end of a frame's bytes, read by Budget.Read on another goroutine.
type feed struct {
	w    *io.PipeWriter
	done chan struct{}
	f    Frame
	err  error
}

func startRead(b *Budget, n int, deadline time.Time) *feed {
	pr, pw := io.Pipe()
	fd := &feed{w: pw, done: make(chan struct{})}
	go func() {
		defer close(fd.done)
		fd.f, fd.err = b.Read(bufio.NewReaderSize(pr, 4096), nil, nil, n, deadline, nil)
		pr.Close()
	}()
	return fd
}

func (fd *feed) send(t *testing.T, n int) {
	t.Helper()
	go fd.w.Write(make([]byte, n))
}

func (fd *feed) finished(t *testing.T) {
	t.Helper()
	select {
	case <-fd.done:
		if fd.err != nil {
			t.Fatal(fd.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read still waiting")
	}
}

func TestPartialFramesDoNotStall(t *testing.T) {
	// Three frames of two chunks against a budget of three: with the first one held, the two
	// others, one chunk in each, would wait for each other until their deadline if the
	// oldest could not go past the limit.
	clk := clock.NewFake(time.Unix(1000, 0))
	b := NewBudget(3*ChunkBytes, clk)
	deadline := clk.Now().Add(time.Hour)
	var fds []*feed
	for i := range 3 {
		fd := startRead(b, 2*ChunkBytes, deadline)
		fd.send(t, ChunkBytes+1)
		checkfor.Eventually(t, 2*time.Second, fmt.Sprintf("frame %d charged", i), func() error {
			if i == 0 {
				return used(b, 2*ChunkBytes)()
			}
			return used(b, 3*ChunkBytes)()
		})
		fds = append(fds, fd)
	}
	fds[0].send(t, ChunkBytes-1)
	fds[0].finished(t)
	fds[1].send(t, ChunkBytes-1)
	fds[1].finished(t)
	// Frames one and two are held, above the limit: the third waits for a release.
	fds[2].send(t, ChunkBytes-1)
	select {
	case <-fds[2].done:
		t.Fatalf("third frame read while %d of %d is held: %v", b.Used(), b.Limit(), fds[2].err)
	default:
	}
	checkfor.Eventually(t, 2*time.Second, "third frame waiting", used(b, 4*ChunkBytes))
	fds[0].f.Release()
	fds[2].finished(t)
	fds[1].f.Release()
	fds[2].f.Release()
	if b.Used() != 0 {
		t.Fatalf("%d still charged", b.Used())
	}
}

func TestSpentBudgetWaitsUntilDeadline(t *testing.T) {
	// The budget is spent by a frame still arriving: the peers are slow, and a frame that
	// finds no room gives up at its deadline.
	clk := clock.NewFake(time.Unix(1000, 0))
	b := NewBudget(ChunkBytes, clk)
	holder := startRead(b, 10*ChunkBytes, clk.Now().Add(time.Hour))
	holder.send(t, ChunkBytes/2)
	checkfor.Eventually(t, 2*time.Second, "holder charged", used(b, ChunkBytes))
	added := clk.Added()
	var conn deadlines
	waitDone := make(chan error, 1)
	go func() {
		_, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, 2*ChunkBytes))), &conn, nil, 2*ChunkBytes, clk.Now().Add(5*time.Second), nil)
		waitDone <- err
	}()
	<-added
	clk.Advance(4 * time.Second)
	select {
	case err := <-waitDone:
		t.Fatalf("gave up before its deadline: %v", err)
	default:
	}
	clk.Advance(time.Second)
	if err := <-waitDone; !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want ErrBudget", err)
	}
	if b.Refused() != 1 || len(conn.set) != 0 {
		t.Fatalf("refused %d, deadlines set %v", b.Refused(), conn.set)
	}
	holder.w.CloseWithError(io.EOF)
	<-holder.done
	if !errors.Is(holder.err, io.ErrUnexpectedEOF) || b.Used() != 0 {
		t.Fatalf("holder: %v, %d still charged", holder.err, b.Used())
	}
}

// deadlines records the read deadlines Read sets.
type deadlines struct {
	mu  sync.Mutex
	set []time.Time
}

func (d *deadlines) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	d.set = append(d.set, t)
	d.mu.Unlock()
	return nil
}

func TestWaitCountsFromTheLastFrameThrough(t *testing.T) {
	// The budget is spent by a handled frame and a stalled one still arriving. Releasing the
	// handled one is progress: the waiter's deadline moves on by what it had waited, and runs
	// out only once no frame got through for a whole read timeout.
	clk := clock.NewFake(time.Unix(1000, 0))
	b := NewBudget(2*ChunkBytes, clk)
	handled, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes))), nil, nil, ChunkBytes, clk.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stalled := startRead(b, 10*ChunkBytes, clk.Now().Add(time.Hour))
	stalled.send(t, 10)
	checkfor.Eventually(t, 2*time.Second, "budget spent", used(b, 2*ChunkBytes))
	var conn deadlines
	start := clk.Now()
	waitDone := make(chan error, 1)
	go func() {
		f, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, 2*ChunkBytes))), &conn, nil, 2*ChunkBytes, start.Add(5*time.Second), nil)
		f.Release()
		waitDone <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "waiting", func() error {
		return checkfor.True(b.Waiting() == 1 && clk.Timers() > 0, "%d waiting, %d timers", b.Waiting(), clk.Timers())
	})
	clk.Advance(4 * time.Second)
	// Its first chunk fits once the handled frame is released; its second waits for the
	// stalled frame, with a deadline 4s later than it was.
	added := clk.Added()
	handled.Release()
	<-added
	checkfor.Eventually(t, 2*time.Second, "waiting for the second chunk", func() error {
		return checkfor.True(b.Waiting() == 1 && b.Used() == 2*ChunkBytes, "%d waiting, %d charged", b.Waiting(), b.Used())
	})
	clk.Advance(4 * time.Second)
	select {
	case err := <-waitDone:
		t.Fatalf("gave up 8s in, 4s after a frame got through: %v", err)
	default:
	}
	clk.Advance(time.Second)
	if err := <-waitDone; !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want ErrBudget once no frame got through for 5s", err)
	}
	conn.mu.Lock()
	if len(conn.set) != 1 || !conn.set[0].Equal(start.Add(9*time.Second)) {
		t.Errorf("read deadlines set %v, want one at %v", conn.set, start.Add(9*time.Second))
	}
	conn.mu.Unlock()
	stalled.w.CloseWithError(io.EOF)
	<-stalled.done
	if b.Used() != 0 {
		t.Fatalf("%d still charged", b.Used())
	}
}

func TestBacklogWaitDoesNotCountAgainstTheDeadline(t *testing.T) {
	// The budget is spent by a frame being handled: the listener is behind, and the frame
	// that waits for it keeps waiting past its deadline, which moves on by the wait.
	clk := clock.NewFake(time.Unix(1000, 0))
	b := NewBudget(ChunkBytes, clk)
	held, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, 2*ChunkBytes))), nil, nil, 2*ChunkBytes, clk.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var conn deadlines
	start := clk.Now()
	waitDone := make(chan error, 1)
	go func() {
		f, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, 2*ChunkBytes))), &conn, nil, 2*ChunkBytes, start.Add(5*time.Second), nil)
		f.Release()
		waitDone <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "second frame waiting", func() error {
		return checkfor.True(b.Waiting() == 1, "%d waiting", b.Waiting())
	})
	clk.Advance(time.Minute)
	select {
	case err := <-waitDone:
		t.Fatalf("gave up while the budget was held by a handled frame: %v", err)
	default:
	}
	held.Release()
	if err := <-waitDone; err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(conn.set) != 1 || conn.set[0].Before(start.Add(5*time.Second+time.Minute)) {
		t.Fatalf("read deadlines set %v, want one at least a minute past %v", conn.set, start.Add(5*time.Second))
	}
}

func TestReleaseWakesAWaiter(t *testing.T) {
	b := NewBudget(2*ChunkBytes, nil)
	var held []Frame
	for range 2 {
		f, err := read(b, make([]byte, 2*ChunkBytes), nil, 2*ChunkBytes)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	waitDone := make(chan error, 1)
	go func() {
		f, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes+1))), nil, nil, ChunkBytes+1, time.Now().Add(10*time.Second), nil)
		f.Release()
		waitDone <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "waiter blocked", func() error {
		return checkfor.True(b.Waiting() == 1, "%d waiting", b.Waiting())
	})
	if len(waitDone) != 0 || b.Used() != 4*ChunkBytes {
		t.Fatalf("waiter done %v, %d charged", len(waitDone) != 0, b.Used())
	}
	held[0].Release()
	if err := <-waitDone; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if b.Waiting() != 0 {
		t.Fatalf("%d still waiting", b.Waiting())
	}
	held[1].Release()
	checkfor.Eventually(t, 2*time.Second, "all released", used(b, 0))
}

func TestSmallFramesReadWhileSpent(t *testing.T) {
	b := NewBudget(ChunkBytes, nil)
	held, err := read(b, make([]byte, 2*ChunkBytes), nil, 2*ChunkBytes)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Read(bufio.NewReader(bytes.NewReader(patterned(FreeBytes))), nil, nil, FreeBytes, time.Time{}, nil)
	if err != nil || !bytes.Equal(f.Body, patterned(FreeBytes)) {
		t.Fatalf("small frame while the budget is spent: %v", err)
	}
	f.Release()
	held.Release()
}

func TestStopEndsTheWait(t *testing.T) {
	b := NewBudget(ChunkBytes, nil)
	held, err := read(b, make([]byte, 2*ChunkBytes), nil, 2*ChunkBytes)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	_, err = b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes+1))), nil, nil, ChunkBytes+1, time.Now().Add(10*time.Second), stop)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("err %v", err)
	}
	held.Release()
	if b.Used() != 0 {
		t.Fatalf("%d still charged", b.Used())
	}
}

func TestBuffersAreReused(t *testing.T) {
	b := NewBudget(64*ChunkBytes, nil)
	data := patterned(4*ChunkBytes + 17)
	once := func() {
		f, err := b.Read(bufio.NewReaderSize(bytes.NewReader(data), 4096), nil, nil, len(data), time.Now().Add(time.Second), nil)
		if err != nil || !bytes.Equal(f.Body, data) {
			t.Fatalf("read: %v", err)
		}
		f.Release()
	}
	once()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		once()
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > uint64(len(data)) {
		t.Fatalf("20 frames of %d bytes allocated %d bytes: chunks and buffers are not reused", len(data), d)
	}
	// What the free lists keep is bounded by a quarter of the limit, however many frames were held.
	var held []Frame
	for range 12 {
		f, err := read(b, data, nil, len(data))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	for i := range held {
		held[i].Release()
	}
	if idle := b.Idle(); idle == 0 || idle > b.Limit()/4 {
		t.Fatalf("free lists keep %d bytes for a limit of %d", idle, b.Limit())
	}
}

// TestFramesOfANewSizeReuseTheirBuffers: once frames of one size have filled the free lists,
// frames of another size still get the buffers their predecessors released.
func TestFramesOfANewSizeReuseTheirBuffers(t *testing.T) {
	b := NewBudget(32*ChunkBytes, nil) // free lists of 8 chunks' worth
	readSize := func(n int) Frame {
		data := patterned(n)
		f, err := read(b, data, nil, n)
		if err != nil || !bytes.Equal(f.Body, data) {
			t.Fatalf("read %d: %v", n, err)
		}
		return f
	}
	// Frames of 3 chunks, several held at once, fill the free lists when released.
	var held []Frame
	for range 3 {
		held = append(held, readSize(3*ChunkBytes))
	}
	for i := range held {
		held[i].Release()
	}
	if b.Idle() < 6*ChunkBytes {
		t.Fatalf("free lists hold %d bytes, want them nearly full", b.Idle())
	}
	// Now frames of 5 chunks, one at a time: from the second on each takes the buffer the one
	// before released.
	first := readSize(5 * ChunkBytes)
	buf := &first.Body[0]
	first.Release()
	for i := range 5 {
		f := readSize(5 * ChunkBytes)
		if &f.Body[0] != buf {
			t.Fatalf("frame %d of the new size got a new buffer", i+2)
		}
		f.Release()
	}
	if idle := b.Idle(); idle > b.Limit()/4 {
		t.Fatalf("free lists keep %d bytes for a limit of %d", idle, b.Limit())
	}
}

func TestSizeClasses(t *testing.T) {
	prev := 0
	for n := 1; n <= maxPooled; n += 1 + n/97 {
		c := classOf(n)
		size := classSize(c)
		if size < n || (n > 1<<minClassShift && size > n+n/4+1) || c < prev || c >= len(pools) {
			t.Fatalf("n %d: class %d of %d bytes (previous class %d)", n, c, size, prev)
		}
		if c > 0 && classSize(c-1) >= n {
			t.Fatalf("n %d: class %d, yet class %d holds %d", n, c, c-1, classSize(c-1))
		}
		prev = c
	}
	if c := classOf(maxPooled); c != len(pools)-1 || classSize(c) != maxPooled {
		t.Fatalf("largest pooled class %d of %d bytes", c, classSize(c))
	}
}
