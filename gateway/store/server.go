package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// Config configures a Server. Zero values take the documented defaults.
type Config struct {
	// Listen is the TCP address to bind, "127.0.0.1:8090" when empty. Port 0
	// picks a free port; Server.Addr reports it.
	Listen string
	// DataDir holds the metadata document and the partition logs; it is
	// created if missing.
	DataDir string
	// TLS, when set, serves TLS on the same port instead of plain TCP.
	TLS *tls.Config
	// Fsync, FsyncInterval and SegmentBytes are passed to every partition log.
	Fsync         partlog.FsyncPolicy
	FsyncInterval time.Duration
	SegmentBytes  int64
	// RootUsername and RootPassword create the root user (id 0) when the data
	// directory is new. They default to "iggy"/"iggy", a development default.
	RootUsername, RootPassword string
	// PasswordIterations is the PBKDF2-SHA256 iteration count of the password hashes the store
	// makes (the root user's, a user created or given a new password); default 20,000. Each
	// user keeps the count its hash was made with, so a store started again with another count
	// still checks the older hashes. Under the race detector one login's 20,000 iterations
	// took 0.65 s of CPU on a loaded 2-core machine.
	PasswordIterations int
	// HeartbeatInterval is how often clients are expected to speak; a
	// consumer-group member silent for more than 1.2 times this long is
	// evicted at the next check, made once every interval (so 1.2 to 2.2
	// intervals after its last word, as the real server does), and a
	// partition handed to a new member waits at most this long for its
	// previous owner to commit. Default 30s.
	HeartbeatInterval time.Duration
	// UnreportedOffsets, when set, is asked after every stored batch whether to confirm it with
	// count 0 ("committed, no offsets to report"), which the real server sends when it cannot
	// resolve a batch's offsets. For tests of clients: the store itself always knows them.
	UnreportedOffsets func(topic wire.Identifier, partition uint32) bool
	// Clock times consumer-group sessions and hand-offs, the consumer offsets' flush and the
	// partitions' background fsync; clock.Real when nil.
	Clock clock.Clock
	// BufferBudget bounds the bytes of frames above 64 KiB (framebuf.FreeBytes) that are
	// arriving or being handled, across all accepted connections; in-process connections (Dial)
	// have a second budget of the same size, so peers on the port cannot stall the gateway's
	// own writes. A connection that finds its budget spent stops reading and is closed if its
	// frame does not arrive within ReadTimeout. The oldest frame still arriving may go past the
	// budget, so a frame larger than it is still read and what is held stays under the budget
	// plus one frame. Default 32 MiB.
	BufferBudget int64
	// ReadTimeout is how long a frame may take to arrive from its first byte; default 5s.
	ReadTimeout time.Duration
	// LoginTimeout closes a connection that sends nothing for this long while it has no
	// session; default 10s.
	LoginTimeout time.Duration
	// Logger receives connection-level problems; slog.Default when nil.
	Logger *slog.Logger
}

// Version is what the server reports as its version.
const Version = "0.9.0-iggy-kafka"

// semver of Version as get_stats reports it (major*1e6 + minor*1e3 + patch).
const versionSemver = 9000

// Server is a running store. Create it with New, run it with Serve, stop it
// with Close or by ending Serve's context.
type Server struct {
	cfg     Config
	log     *slog.Logger
	ln      net.Listener
	started time.Time

	// mu guards the whole metadata state and the session table. Message
	// appends and reads run outside it, on the partition logs.
	mu          sync.RWMutex
	state       *state
	conns       map[*conn]struct{}
	nextSession uint64
	nextClient  uint32

	meta     *metaStore
	offDirty atomic.Bool

	// panics counts connection handlers stopped by a recovered panic; it
	// should stay zero, and tests check that it does.
	panics atomic.Int64
	// trashSeq names the directories of deleted streams, topics and partitions (trashLocked).
	trashSeq atomic.Uint64
	// afterDelete, when set, runs after a stream, topic or partition delete left the metadata
	// and before its directory is removed (tests interleave a create there).
	afterDelete func()

	// netBudget and memBudget bound the large frames of accepted and of in-process
	// connections, from their first byte until they are handled.
	netBudget, memBudget *framebuf.Budget

	// rw traffic counters for get_stats.
	readBytes    atomic.Uint64
	writtenBytes atomic.Uint64

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	connWG    sync.WaitGroup
	bgWG      sync.WaitGroup
}

// New opens (or creates) cfg.DataDir, recovers metadata and every partition
// log in it, and binds the listener. The server answers nothing until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8090"
	}
	if cfg.DataDir == "" {
		return nil, errors.New("store: DataDir is required")
	}
	if cfg.RootUsername == "" {
		cfg.RootUsername = "iggy"
	}
	if cfg.RootPassword == "" {
		cfg.RootPassword = "iggy"
	}
	if cfg.PasswordIterations <= 0 {
		cfg.PasswordIterations = pbkdf2Iterations
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 30 * time.Second
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BufferBudget <= 0 {
		cfg.BufferBudget = defaultBufferBudget
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = defaultReadTimeout
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = defaultLoginTimeout
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("store: create data dir: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		started: time.Now(),
		conns:   make(map[*conn]struct{}),
		closing: make(chan struct{}),

		netBudget: framebuf.NewBudget(cfg.BufferBudget, nil),
		memBudget: framebuf.NewBudget(cfg.BufferBudget, nil),
		closed:    make(chan struct{}),
		meta:      &metaStore{path: filepath.Join(cfg.DataDir, "metadata.json")},
	}
	if err := s.recover(); err != nil {
		s.closeLogs()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.closeLogs()
		return nil, fmt.Errorf("store: listen %s: %w", cfg.Listen, err)
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	s.ln = ln
	s.bgWG.Add(2)
	go s.sweepStale()
	go s.flushOffsets()
	return s, nil
}

// Addr is the bound listener address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts connections until ctx is done or Close is called, then stops
// gracefully: the listener closes, open connections are closed after their
// current request, metadata and offsets are written and the logs closed.
// It returns nil after a requested stop and the accept error otherwise.
func (s *Server) Serve(ctx context.Context) error {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-stop:
		}
	}()
	var acceptErr error
	backoff := 5 * time.Millisecond
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.isClosing() {
				break
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(backoff)
				backoff = min(2*backoff, time.Second)
				continue
			}
			acceptErr = err
			break
		}
		backoff = 5 * time.Millisecond
		s.startConn(nc)
	}
	if acceptErr != nil {
		_ = s.Close()
		return fmt.Errorf("store: accept: %w", acceptErr)
	}
	<-s.closed
	return nil
}

func (s *Server) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// Close stops the server and releases everything it holds. It is safe to
// call more than once and from any goroutine; every call returns the same
// error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		err := s.ln.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
		s.mu.Lock()
		for c := range s.conns {
			c.closeNow()
		}
		s.mu.Unlock()
		s.connWG.Wait()
		s.bgWG.Wait()
		if serr := s.saveState(); serr != nil {
			err = errors.Join(err, serr)
		}
		if lerr := s.closeLogs(); lerr != nil {
			err = errors.Join(err, lerr)
		}
		s.closeErr = err
		close(s.closed)
	})
	<-s.closed
	return s.closeErr
}

func (s *Server) closeLogs() error {
	if s.state == nil {
		return nil
	}
	var errs []error
	for _, st := range s.state.streams {
		if st == nil {
			continue
		}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			for _, p := range t.partitions {
				if err := p.log.Close(); err != nil && !errors.Is(err, partlog.ErrClosed) {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// now is the store's time, from Config.Clock.
func (s *Server) now() time.Time { return s.cfg.Clock.Now() }

// sweepStale evicts consumer-group members whose connection has been silent
// for more than 1.2 heartbeat intervals (protocol 5.4) and completes overdue
// hand-offs. Evictions are decided as the real server decides them: once
// every heartbeat interval from the start, so a silent member goes between
// 1.2 and 2.2 intervals after its last word (36 to 66 s at the default 30 s).
// Hand-offs complete the moment they are due.
func (s *Server) sweepStale() {
	defer s.bgWG.Done()
	interval := max(s.cfg.HeartbeatInterval, time.Millisecond)
	limit := s.cfg.HeartbeatInterval * 6 / 5
	next := s.now().Add(interval) // the next eviction check
	t := s.cfg.Clock.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C():
			now := s.now()
			if !now.Before(next) {
				s.evictStale(now, limit)
				for !now.Before(next) {
					next = next.Add(interval)
				}
			}
			t.Reset(min(next.Sub(now), s.settleRevocations(now)))
		}
	}
}

// evictStale evicts the members silent for more than limit.
func (s *Server) evictStale(now time.Time, limit time.Duration) {
	type victim struct {
		c      *conn
		client wire.Uint128
	}
	var stale []victim
	s.mu.Lock()
	for c := range s.conns {
		if c.sess == nil || len(c.sess.groups) == 0 {
			continue
		}
		if now.Sub(time.Unix(0, c.lastSeen.Load())) > limit {
			stale = append(stale, victim{c, c.sess.client})
			s.endSessionLocked(c)
		}
	}
	s.mu.Unlock()
	for _, v := range stale {
		s.log.Info("evicting stale consumer-group member", "client", v.c.id, "addr", v.c.addr)
		v.c.evictWith(v.client, wire.EvictStaleClient)
	}
}

// offsetFlushEvery is how long after consumer offsets change the metadata document holding them
// is written (on Config.Clock).
const offsetFlushEvery = 100 * time.Millisecond

// flushOffsets writes the metadata document shortly after consumer offsets
// change, so a poll with auto-commit never waits for a disk write.
func (s *Server) flushOffsets() {
	defer s.bgWG.Done()
	t := s.cfg.Clock.NewTimer(offsetFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C():
			t.Reset(offsetFlushEvery)
			if s.offDirty.Swap(false) {
				if err := s.saveState(); err != nil {
					s.log.Error("writing consumer offsets", "err", err)
					s.offDirty.Store(true)
				}
			}
		}
	}
}
