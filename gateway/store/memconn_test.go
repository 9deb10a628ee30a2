package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// pump writes data in random-sized pieces and returns the first error.
func pump(c net.Conn, data []byte, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, seed))
	for len(data) > 0 {
		n := min(len(data), 1+r.IntN(300<<10))
		if _, err := c.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Both directions at once, more than the queue limit each, so writers block
// on a full queue and resume as the reader drains it.
func TestMemConnFullDuplexIntegrity(t *testing.T) {
	a, b := memPipe()
	defer a.Close()
	defer b.Close()
	ab := randomBytes(3*memQueueLimit+12345, 1)
	ba := randomBytes(2*memQueueLimit+777, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	read := func(c net.Conn, want []byte) {
		defer wg.Done()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c, got); err != nil {
			errs <- err
			return
		}
		if !bytes.Equal(got, want) {
			errs <- errors.New("bytes differ")
		}
	}
	wg.Add(4)
	go func() { defer wg.Done(); errs <- pump(a, ab, 3) }()
	go func() { defer wg.Done(); errs <- pump(b, ba, 4) }()
	go read(b, ab)
	go read(a, ba)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Concurrent writers never interleave inside one Write.
func TestMemConnConcurrentWritesStayWhole(t *testing.T) {
	a, b := memPipe()
	defer a.Close()
	defer b.Close()
	const writers, each, size = 4, 50, 100 << 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := bytes.Repeat([]byte{byte('a' + w)}, size)
			for range each {
				if _, err := a.Write(msg); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	buf := make([]byte, size)
	for range writers * each {
		if _, err := io.ReadFull(b, buf); err != nil {
			t.Fatal(err)
		}
		if bytes.Count(buf, buf[:1]) != size {
			t.Fatalf("a write was split by another one")
		}
	}
	wg.Wait()
}

func TestMemConnDeadlines(t *testing.T) {
	a, b := memPipe()
	defer a.Close()
	defer b.Close()
	var one [1]byte

	_ = a.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := a.Read(one[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v", err)
	}
	var ne net.Error
	if _, err := a.Read(one[:]); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("deadline error is not a net.Error timeout: %v", err)
	}

	// A blocked read wakes when its deadline passes.
	_ = a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	start := time.Now()
	if _, err := a.Read(one[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked read: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("deadline woke the read late")
	}

	// Clearing the deadline makes the end usable again.
	_ = a.SetDeadline(time.Time{})
	if _, err := b.Write([]byte{7}); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Read(one[:]); n != 1 || err != nil || one[0] != 7 {
		t.Fatalf("read after clearing: %d %v %d", n, err, one[0])
	}

	// Moving a pending deadline later keeps the read waiting past the
	// first one; moving it to the past wakes the read at once.
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_ = a.SetReadDeadline(time.Now().Add(time.Hour))
	done := make(chan error, 1)
	go func() { _, err := a.Read(one[:]); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("read returned before its extended deadline: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	_ = a.SetReadDeadline(time.Now())
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after deadline moved to now: %v", err)
	}

	// Small writes queue up to the limit without waiting; one more times
	// out on the full queue.
	chunk := make([]byte, 4096)
	for range memQueueLimit / len(chunk) {
		if _, err := a.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	_ = a.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
	if n, err := a.Write(chunk); !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
		t.Fatalf("write into a full queue: %d %v", n, err)
	}
	// A large write waits for the reader and times out when none comes.
	_ = a.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
	if n, err := a.Write(make([]byte, memLendMin)); !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
		t.Fatalf("unread large write: %d %v", n, err)
	}
	_ = a.SetWriteDeadline(time.Time{})
	b.in.mu.Lock()
	lent := b.in.lent
	b.in.mu.Unlock()
	if lent != nil {
		t.Fatal("a failed large write stays readable")
	}
}

func TestMemConnClose(t *testing.T) {
	a, b := memPipe()
	var one [1]byte

	// Close wakes a blocked reader on the same end.
	done := make(chan error, 1)
	go func() { _, err := a.Read(one[:]); done <- err }()
	// and a reader on the peer, after what was written is drained.
	if !b.PeerOpen() {
		t.Fatal("fresh pipe reports its peer gone")
	}
	if _, err := a.Write([]byte("xy")); err != nil {
		t.Fatal(err)
	}
	if b.PeerOpen() {
		t.Fatal("unread bytes do not count against the peer")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on closed end: %v", err)
	}
	if got, err := io.ReadAll(b); err != nil || string(got) != "xy" {
		t.Fatalf("peer drained %q, %v", got, err)
	}
	if _, err := b.Read(one[:]); err != io.EOF {
		t.Fatalf("peer read after drain: %v", err)
	}
	if b.PeerOpen() || a.PeerOpen() {
		t.Fatal("a closed pipe reports its peer open")
	}
	if _, err := b.Write(one[:]); err == nil {
		t.Fatalf("write to a closed peer succeeded")
	}
	if _, err := a.Write(one[:]); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on closed end: %v", err)
	}
	if err := a.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}

	// Close wakes a writer blocked on a full queue, on either end.
	c, d := memPipe()
	defer d.Close()
	wdone := make(chan error, 1)
	go func() { _, err := c.Write(make([]byte, memQueueLimit+1)); wdone <- err }()
	checkfor.Eventually(t, 5*time.Second, "the blocked write to lend its buffer", func() error {
		c.out.mu.Lock()
		defer c.out.mu.Unlock()
		return checkfor.True(c.out.lent != nil, "nothing lent; %d bytes queued", len(c.out.buf))
	})
	_ = d.Close()
	if err := <-wdone; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("blocked write after peer close: %v", err)
	}
	_ = c.Close()
}

// An in-process connection is served like an accepted one: the same
// session rules, evictions, and teardown from either side, with no
// goroutine left behind.
func TestServerDial(t *testing.T) {
	base := runtime.NumGoroutine()
	s := startServer(t, t.TempDir(), nil)
	memDial := func() *rawClient {
		nc, err := s.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		clientSeq++
		return &rawClient{t: t, nc: nc, client: wire.Uint128{Lo: clientSeq, Hi: 0xdef}, counter: 1}
	}
	conns := func() int {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return len(s.conns)
	}

	c := memDial()
	wantStatus(t, c.do(wire.CmdGetStreams, nil), wire.Unauthenticated)
	ok(t, c.login("iggy", "iggy"))
	mustCreateStream(t, c, "mem")
	mustCreateTopic(t, c, sid0, "t", 1)
	big := bytes.Repeat([]byte("m"), 1<<20)
	ok(t, c.do(wire.CmdSendMessages, sendBody(sid0, tid0, wire.PartitionIDPartitioning(0), batchOf(t, string(big)))))

	bad := memDial()
	wantEviction(t, bad.do(wire.CmdLoginRegister, []byte{1, 2}), wire.EvictMalformedLogin)
	bad.expectClosed()

	// The client closing ends the server side.
	if err := c.nc.Close(); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "server connections gone", func() error {
		n := conns()
		return checkfor.True(n == 0, "%d connections open", n)
	})

	// Server.Close closes what is open; Dial after it fails.
	d := memDial()
	ok(t, d.login("iggy", "iggy"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d.expectClosed()
	if _, err := s.Dial(context.Background()); err == nil {
		t.Fatal("Dial after Close succeeded")
	}
	_ = d.nc.Close()
	checkfor.Eventually(t, 5*time.Second, "goroutines back to the baseline", func() error {
		// startServer's Serve goroutine exits in Cleanup.
		n := runtime.NumGoroutine()
		return checkfor.True(n <= base+1, "%d goroutines, baseline %d", n, base)
	})
}
