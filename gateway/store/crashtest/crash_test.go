package crashtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

const (
	partitions = 2
	clients    = 4
	rounds     = 3
)

// seedEnv names the variable that replays a run: every random choice of the
// test (batch sizes, payload lengths, kill delays) is drawn from its seed.
const seedEnv = "IGGY_CRASH_SEED"

// runSeed returns the seed from seedEnv, or a fresh one, and logs it so that a
// failing run can be replayed.
func runSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)
	return seed
}

// TestMain removes the iggy-kafka build when the test ends.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// ack is a message the store confirmed: it must survive any crash.
type ack struct {
	partition uint32
	offset    uint64
}

type acks struct {
	mu sync.Mutex
	m  map[ack]string
}

func (a *acks) add(partition uint32, base uint64, payloads []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, p := range payloads {
		a.m[ack{partition, base + uint64(i)}] = p
	}
}

// store is one run of the store process.
type store struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // set before exited is closed
	log    string
}

func startStore(t *testing.T, bin, addr, data, logPath string) *store {
	t.Helper()
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "store", "--listen", addr, "--data", data, "--fsync", "always")
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		t.Fatal(err)
	}
	s := &store{cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() {
		s.err = cmd.Wait()
		lf.Close()
		close(s.exited)
	}()
	t.Cleanup(func() { s.kill() })
	return s
}

func (s *store) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
	}
}

func (s *store) logTail() string { return testbin.TailFile(s.log, 40) }

// connect dials until the store answers a ping or the deadline passes.
func connect(t *testing.T, s *store, addr string, pool int) *iggy.Client {
	t.Helper()
	var c *iggy.Client
	err := checkfor.Wait(20*time.Second, func() error {
		select {
		case <-s.exited:
			t.Fatalf("store exited: %v\n%s", s.err, s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		dialed, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{addr}, PoolSize: pool, DialTimeout: time.Second, RequestTimeout: 10 * time.Second})
		if err != nil {
			return err
		}
		if err := dialed.Ping(ctx); err != nil {
			dialed.Close()
			return err
		}
		c = dialed
		return nil
	})
	if err != nil {
		t.Fatalf("store at %s never answered: %v\n%s", addr, err, s.logTail())
	}
	return c
}

// load sends batches from several clients until ctx ends, recording every
// acknowledged message.
func load(ctx context.Context, c *iggy.Client, stream, topic wire.Identifier, seed uint64, round int, rec *acks) (sent int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(round)<<32|uint64(id)))
			var b message.Builder
			for seq := 0; ctx.Err() == nil; seq++ {
				partition := uint32(id % partitions)
				n := 1 + rng.IntN(20)
				payloads := make([]string, n)
				b.Reset()
				for i := range n {
					// Client id and sequence make every payload unique, so a
					// message stored twice shows up as a duplicate.
					payloads[i] = fmt.Sprintf("r%d-c%d-s%d-m%d-%s", round, id, seq, i, strings.Repeat("x", rng.IntN(200)))
					b.Add(message.MakeID(uint64(seq)<<8|uint64(i), uint64(round)<<32|uint64(id)), uint64(time.Now().UnixMicro()), []byte(payloads[i]), nil)
				}
				batch, err := b.Finish()
				if err != nil {
					panic(err)
				}
				base, err := c.SendBatch(ctx, stream, topic, partition, batch)
				if err != nil {
					continue
				}
				rec.add(partition, base, payloads)
				mu.Lock()
				sent += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return sent
}

// readAll polls a partition from offset 0 to its end and checks each record
// and frame on the way.
func readAll(t *testing.T, c *iggy.Client, stream, topic wire.Identifier, partition uint32) []string {
	t.Helper()
	var out []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		p, err := c.Poll(ctx, iggy.PollRequest{
			Stream: stream, Topic: topic, Partition: partition,
			Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: uint64(len(out))},
			Count:    1000,
		})
		if err != nil {
			t.Fatalf("poll partition %d at %d: %v", partition, len(out), err)
		}
		if p.Count == 0 {
			p.Release()
			return out
		}
		r := message.Records(p.Batches)
		for rec, ok := r.Next(); ok; rec, ok = r.Next() {
			h, _ := message.ParseBatchHeader(rec)
			c := bytes.Clone(rec)
			message.Stamp(c, h.PartitionID, h.BaseOffset, h.BaseTimestamp)
			if binary.LittleEndian.Uint64(c[40:]) != h.Checksum {
				t.Fatalf("partition %d: record at %d has a wrong batch checksum", partition, h.BaseOffset)
			}
			err := message.Each(rec, func(f message.Frame) bool {
				off := h.BaseOffset + uint64(f.OffsetDelta)
				if !f.Valid() {
					t.Fatalf("partition %d offset %d: frame checksum invalid", partition, off)
				}
				if off != uint64(len(out)) {
					t.Fatalf("partition %d: got offset %d, expected %d", partition, off, len(out))
				}
				out = append(out, string(f.Payload))
				return true
			})
			if err != nil {
				t.Fatalf("partition %d: %v", partition, err)
			}
		}
		if r.Err() != nil {
			t.Fatalf("partition %d: %v", partition, r.Err())
		}
		p.Release()
	}
}

func verify(t *testing.T, c *iggy.Client, stream, topic wire.Identifier, rec *acks) int {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	stored := 0
	for p := range uint32(partitions) {
		got := readAll(t, c, stream, topic, p)
		stored += len(got)
		seen := make(map[string]uint64, len(got))
		for off, payload := range got {
			if prev, dup := seen[payload]; dup {
				t.Fatalf("partition %d: payload %.30q stored twice, at %d and %d", p, payload, prev, off)
			}
			seen[payload] = uint64(off)
		}
		for a, payload := range rec.m {
			if a.partition != p {
				continue
			}
			if a.offset >= uint64(len(got)) {
				t.Fatalf("partition %d: acknowledged offset %d lost (partition ends at %d)", p, a.offset, len(got))
			}
			if got[a.offset] != payload {
				t.Fatalf("partition %d offset %d: holds %.30q, acknowledged %.30q", p, a.offset, got[a.offset], payload)
			}
		}
	}
	return stored
}

func TestAcknowledgedMessagesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the store binary")
	}
	bin := testbin.Path(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	logPath := filepath.Join(tmp, "store.log")
	addr := freeport.Addr(t)

	s := startStore(t, bin, addr, data, logPath)
	c := connect(t, s, addr, clients)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	sd, err := c.CreateStream(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	stream := wire.NumericID(sd.ID)
	td, err := c.CreateTopic(ctx, stream, "events", partitions, iggy.TopicOptions{})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	topic := wire.NumericID(td.ID)

	rec := &acks{m: map[ack]string{}}
	seed := runSeed(t)
	// The clients draw from streams (seed, round<<32|client); this one is
	// apart from them all.
	rng := rand.New(rand.NewPCG(seed, 1<<63))
	for round := range rounds {
		loadCtx, stopLoad := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- load(loadCtx, c, stream, topic, seed, round, rec) }()
		// Kill once the load has produced acknowledgements, at a random
		// moment after that.
		rec.mu.Lock()
		before := len(rec.m)
		rec.mu.Unlock()
		err := checkfor.Wait(15*time.Second, func() error {
			rec.mu.Lock()
			n := len(rec.m)
			rec.mu.Unlock()
			return checkfor.True(n > before, "%d acknowledged, none new this round", n)
		})
		if err != nil {
			stopLoad()
			t.Fatalf("round %d: no acknowledgements: %v\n%s", round, err, s.logTail())
		}
		// This wait is the experiment, not a wait for a condition: the kill
		// lands at a moment drawn from the seed, so a run that loses an
		// acknowledged message can be replayed with the same delays.
		delay := time.Duration(50+rng.IntN(1200)) * time.Millisecond
		t.Logf("round %d: killing the store %v after the first acknowledgement", round, delay)
		<-time.NewTimer(delay).C
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-s.exited
		stopLoad()
		sent := <-done
		c.Close()

		s = startStore(t, bin, addr, data, logPath)
		c = connect(t, s, addr, clients)
		stored := verify(t, c, stream, topic, rec)
		rec.mu.Lock()
		acked := len(rec.m)
		rec.mu.Unlock()
		t.Logf("round %d: %d messages acknowledged this round, %d in total, %d stored", round, sent, acked, stored)
		if stored < acked {
			t.Fatalf("round %d: %d stored, fewer than the %d acknowledged", round, stored, acked)
		}
	}
	c.Close()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		var ee *exec.ExitError
		if s.err != nil && !errors.As(s.err, &ee) {
			t.Logf("store exit: %v", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("store did not stop on SIGTERM\n%s", s.logTail())
	}
}
