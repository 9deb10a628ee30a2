package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// Broker is one gateway of the fleet as Metadata advertises it.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
}

// Config configures a Server.
type Config struct {
	// NodeID is this gateway's broker id.
	NodeID int32
	// AdvertisedHost and AdvertisedPort are the address clients are told to use for this node.
	// A zero port means the port of the listener passed to Serve.
	AdvertisedHost string
	AdvertisedPort int32
	// Brokers is the fleet. Empty means this node alone at its advertised address; when set it
	// should contain this node too.
	Brokers []Broker
	// ClusterID is reported by Metadata and DescribeCluster; default "iggy-kafka".
	ClusterID string
	// MaxRequestBytes bounds one request's size; a larger size prefix closes the connection.
	// Default 100 MiB.
	MaxRequestBytes int32
	// MaxInFlight bounds the requests one connection processes at once; default 32.
	MaxInFlight int
	// BufferBudget bounds the bytes of requests above 64 KiB (framebuf.FreeBytes) that are
	// arriving or being handled, across all connections: a connection that finds it spent stops
	// reading until requests are answered, and is closed when its request does not arrive within
	// ReadTimeout. The oldest request still arriving may go past it, so a request larger than
	// the budget is still read and what is held stays under the budget plus one request.
	// Default 32 MiB.
	BufferBudget int64
	// FetchMaxBytes caps the MaxBytes of every Fetch (Kafka's broker fetch.max.bytes); a
	// partition's first batch is still answered whole. Default 4 MiB.
	FetchMaxBytes int64
	// ReadTimeout is how long a request may take to arrive from its first byte; default 5s.
	ReadTimeout time.Duration
	// IdleTimeout closes a connection that sends nothing for this long; default 10 minutes,
	// Kafka's connections.max.idle.ms.
	IdleTimeout time.Duration
	// AuthIdleTimeout replaces IdleTimeout before SASL authentication; default 10s.
	AuthIdleTimeout time.Duration
	// AutoCreateTopics lets Metadata create topics clients ask for.
	AutoCreateTopics bool
	// TLS, when set, wraps every accepted connection.
	TLS *tls.Config
	// SASL requires SASL authentication (PLAIN, and SCRAM with SCRAM set) before any request
	// other than ApiVersions.
	SASL bool
	// Storage serves connections that did not authenticate.
	Storage Storage
	// Authenticate checks SASL PLAIN credentials and returns the Storage acting as that user. A
	// nil Storage or an error rejects the credentials.
	Authenticate func(ctx context.Context, user, password string) (Storage, error)
	// SCRAM, when set, keeps the SCRAM credentials: SASL then offers SCRAM-SHA-256 and
	// SCRAM-SHA-512 beside PLAIN, and DescribeUserScramCredentials and
	// AlterUserScramCredentials read and change its credentials (without it there are none).
	SCRAM SCRAMUsers
	// ACLs, when set, shows and changes Iggy's permissions as Kafka ACLs (DescribeAcls,
	// CreateAcls, DeleteAcls); without it those answer SECURITY_DISABLED.
	ACLs ACLs
	// BrokerConfigs, when set, keeps the dynamic broker configs that AlterConfigs sets and
	// DescribeConfigs lists; without it broker configs cannot be changed.
	BrokerConfigs BrokerConfigs
	// ClientQuotas, when set, keeps the client quotas that AlterClientQuotas sets and
	// DescribeClientQuotas lists.
	ClientQuotas ClientQuotas
	// Groups serves the consumer-group APIs for every connection; nil: they are not advertised
	// and are refused as unsupported.
	Groups GroupCoordinator
	// Txns serves the transaction APIs (txns.go); nil: a transactional id is refused and the
	// transaction keys are neither advertised nor served.
	Txns TxnCoordinator
	// TransactionVersion is the level of the transaction.version feature (KIP-584) ApiVersions
	// finalizes when Txns is set: 2 has clients use transactions v2 (KIP-890 part 2: the epoch
	// bumped by every EndTxn, partitions and groups added by Produce v12 and TxnOffsetCommit
	// v5), 1 transactions v1 as Kafka's clients speak it to a cluster at that level, 0 finalizes
	// no feature. Every version of the transaction keys is served whatever it is.
	TransactionVersion int16
	// Fleet, when set, is the live view of the fleet (fleet.go); nil lists Brokers and makes
	// this node the controller.
	Fleet Fleet
	// CheckReachable makes Metadata leave out the fleet's gateways that refuse a connection
	// (reach.go); the gateway sets it, tests of made-up fleets do not.
	CheckReachable bool
	// Quotas, when set, enforces the client quotas (throttle.go); the Server neither starts
	// nor closes it. AlterClientQuotas asks it to read the quotas again at once.
	Quotas *quota.Manager
	// Observer, when set, is told about connections and requests (metrics).
	Observer Observer
	// Clock times the fetch long poll (MaxWaitMillis); default the wall clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Observer receives events for metrics. Calls come from many goroutines at once.
type Observer interface {
	ConnectionOpened()
	ConnectionClosed()
	// Request is called once per answered (or unanswered, acks=0) request with the first
	// non-zero error code the response carried, or 0.
	Request(key int16, errorCode int16, bytesIn, bytesOut int)
	RecordsProduced(n int)
	RecordsFetched(n int)
	// ClientTraffic is called for every Produce and Fetch answered with the bytes of its
	// request and answer, by the quota user and client id (throttle.go).
	ClientTraffic(user, clientID string, key int16, bytesIn, bytesOut int)
	// ClientThrottled is called for every request a client quota throttled.
	ClientThrottled(user, clientID string, d time.Duration)
	// FetchWaitCapped is called for a fetch long poll that watches only 16 of its partitions
	// (maxFetchWaiters).
	FetchWaitCapped()
}

const (
	defaultMaxRequestBytes = 100 << 20
	defaultMaxInFlight     = 32
)

// Server is the Kafka protocol listener: it accepts connections, decodes requests with kmsg and
// answers them through a Storage.
type Server struct {
	cfg Config
	// leaderCache holds Metadata's partition leaders per topic (leader.go).
	leaderCache leaderCache
	log         *slog.Logger
	clock       clock.Clock
	// budget is shared by the connections' large requests, from their first byte until they
	// are answered.
	budget *framebuf.Budget

	ctx    context.Context // cancelled when shutdown gives up waiting
	cancel context.CancelFunc
	// draining closes when Shutdown or LameDuck starts: long polls answer at once with what
	// they have.
	draining chan struct{}
	// lameDuck: this gateway leads nothing and answers Produce and Fetch NOT_LEADER_OR_FOLLOWER.
	lameDuck  atomic.Bool
	drainOnce sync.Once

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closing   bool
	connWG    sync.WaitGroup
	localPort int32
	// members counts the connections whose member flag is set (members.go); membersDropped,
	// when not nil, closes the next time the count drops.
	members        int
	membersDropped chan struct{}

	// controls are the request hooks tests install (control.go).
	controls controls
	// reach keeps which other gateways accepted a connection lately (reach.go).
	reach reachability
}

// NewServer checks cfg and returns a Server ready to Serve.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Storage == nil {
		return nil, errors.New("kafka: Config.Storage is required")
	}
	if cfg.SASL && cfg.Authenticate == nil {
		return nil, errors.New("kafka: SASL needs Config.Authenticate")
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = defaultMaxRequestBytes
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = defaultMaxInFlight
	}
	if cfg.BufferBudget <= 0 {
		cfg.BufferBudget = defaultBufferBudget
	}
	if cfg.FetchMaxBytes <= 0 {
		cfg.FetchMaxBytes = defaultFetchMaxBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = defaultReadTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.AuthIdleTimeout <= 0 {
		cfg.AuthIdleTimeout = defaultAuthIdleTimeout
	}
	if cfg.ClusterID == "" {
		cfg.ClusterID = "iggy-kafka"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Clock = clock.Or(cfg.Clock)
	seen := make(map[int32]bool)
	for _, b := range cfg.Brokers {
		if seen[b.NodeID] {
			return nil, fmt.Errorf("kafka: broker id %d listed twice", b.NodeID)
		}
		seen[b.NodeID] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		clock:     clock.Or(cfg.Clock),
		budget:    framebuf.NewBudget(cfg.BufferBudget, nil),
		ctx:       ctx,
		cancel:    cancel,
		draining:  make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
	}, nil
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("kafka: server closed")

// Serve accepts connections on ln until Shutdown; it returns ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && s.localPort == 0 {
		s.localPort = int32(a.Port)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("kafka accept failed; retrying", "err", err, "backoff", backoff)
				select {
				case <-time.After(backoff):
				case <-s.ctx.Done():
					return ErrServerClosed
				}
				continue
			}
			return err
		}
		backoff = 0
		if s.cfg.TLS != nil {
			nc = tls.Server(nc, s.cfg.TLS)
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.connWG.Add(1)
		s.mu.Unlock()
		if o := s.cfg.Observer; o != nil {
			o.ConnectionOpened()
		}
		go c.serve()
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) forget(c *conn) {
	s.setMember(c, false)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	if o := s.cfg.Observer; o != nil {
		o.ConnectionClosed()
	}
	s.connWG.Done()
}

// Shutdown stops accepting, lets every connection finish the requests it already read and
// answer them, then closes them. When ctx ends first, in-flight work is cancelled and the
// connections are closed at once; ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.drainOnce.Do(func() { close(s.draining) })
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.stopReading()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.connWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// CloseUser closes every connection authenticated as the SASL user user at once, abandoning
// its in-flight requests, and reports how many it closed. The gateway calls it when Iggy stops
// accepting that user (deleted, deactivated, password changed): a connection must not go on
// acting on credentials its owner no longer has. A client that reconnects authenticates again.
func (s *Server) CloseUser(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		// A cancelled connection is already on its way out.
		if u := c.authUser.Load(); u != nil && *u == user && c.ctx.Err() == nil {
			c.cancel()
			c.nc.Close()
			n++
		}
	}
	return n
}

// Listening reports whether Serve is accepting on at least one listener.
func (s *Server) Listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing && len(s.listeners) > 0
}

// brokers returns the fleet sorted by node id, or this node alone.
func (s *Server) brokers() []Broker {
	if len(s.cfg.Brokers) > 0 {
		bs := append([]Broker(nil), s.cfg.Brokers...)
		sort.Slice(bs, func(i, j int) bool { return bs[i].NodeID < bs[j].NodeID })
		return bs
	}
	port := s.cfg.AdvertisedPort
	if port == 0 {
		s.mu.Lock()
		port = s.localPort
		s.mu.Unlock()
	}
	host := s.cfg.AdvertisedHost
	if host == "" {
		host = "127.0.0.1"
	}
	return []Broker{{NodeID: s.cfg.NodeID, Host: host, Port: port}}
}
