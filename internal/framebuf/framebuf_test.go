package framebuf

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func alloc(n int) []byte { return make([]byte, n) }

func TestReadAssemblesChunks(t *testing.T) {
	b := NewBudget(4*ChunkBytes, nil)
	want := make([]byte, 2*ChunkBytes+123)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got, err := b.Read(bufio.NewReader(bytes.NewReader(want)), len(want), alloc, time.Now().Add(time.Second), nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, err %v; equal %v", len(got), err, bytes.Equal(got, want))
	}
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged", b.Used())
	}
}

func TestReadAllocatesOnlyWhatArrived(t *testing.T) {
	b := NewBudget(64*ChunkBytes, nil)
	calls := 0
	_, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes+1))), 100<<20, func(n int) []byte {
		calls++
		return make([]byte, n)
	}, time.Now().Add(time.Second), nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	if calls != 0 {
		t.Fatal("the claimed size was allocated before it arrived")
	}
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged after a failed read", b.Used())
	}
}

// slowReader hands out its bytes, then blocks until released.
type slowReader struct {
	data    []byte
	release chan struct{}
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		<-r.release
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestSpentBudgetWaitsUntilDeadline(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	b := NewBudget(ChunkBytes, clk)
	hold := &slowReader{data: make([]byte, ChunkBytes/2), release: make(chan struct{})}
	holdDone := make(chan error, 1)
	go func() {
		_, err := b.Read(bufio.NewReader(hold), 10*ChunkBytes, alloc, clk.Now().Add(time.Hour), nil)
		holdDone <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "first reader charged", func() error {
		if b.Used() != ChunkBytes {
			return errors.New("not charged")
		}
		return nil
	})
	added := clk.Added()
	waitDone := make(chan error, 1)
	go func() {
		_, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, 2*ChunkBytes))), 2*ChunkBytes, alloc, clk.Now().Add(5*time.Second), nil)
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
	if b.Refused() != 1 {
		t.Fatalf("refused %d", b.Refused())
	}
	close(hold.release)
	if err := <-holdDone; !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("holder: %v", err)
	}
	if b.Used() != 0 {
		t.Fatalf("%d still charged", b.Used())
	}
}

func TestReleaseWakesAWaiter(t *testing.T) {
	b := NewBudget(2*ChunkBytes, nil)
	hold := &slowReader{data: make([]byte, ChunkBytes+10), release: make(chan struct{})}
	holdDone := make(chan error, 1)
	go func() {
		_, err := b.Read(bufio.NewReader(hold), 3*ChunkBytes, alloc, time.Now().Add(10*time.Second), nil)
		holdDone <- err
	}()
	checkfor.Eventually(t, 2*time.Second, "holder charged", func() error {
		if b.Used() != 2*ChunkBytes {
			return errors.New("not yet")
		}
		return nil
	})
	waitDone := make(chan error, 1)
	go func() {
		_, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes+1))), ChunkBytes+1, alloc, time.Now().Add(10*time.Second), nil)
		waitDone <- err
	}()
	close(hold.release)
	<-holdDone
	if err := <-waitDone; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestStopEndsTheWait(t *testing.T) {
	b := NewBudget(ChunkBytes, nil)
	hold := &slowReader{data: make([]byte, 10), release: make(chan struct{})}
	defer close(hold.release)
	go b.Read(bufio.NewReader(hold), 2*ChunkBytes, alloc, time.Now().Add(10*time.Second), nil)
	checkfor.Eventually(t, 2*time.Second, "holder charged", func() error {
		if b.Used() == 0 {
			return errors.New("not yet")
		}
		return nil
	})
	stop := make(chan struct{})
	close(stop)
	_, err := b.Read(bufio.NewReader(bytes.NewReader(make([]byte, ChunkBytes+1))), ChunkBytes+1, alloc, time.Now().Add(10*time.Second), stop)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("err %v", err)
	}
}
