package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Config configures a gateway.
type Config struct {
	// Bind is the Kafka listener address; default "127.0.0.1:9092". Port 0 picks a free port.
	Bind string
	// AdvertisedAddr is the host:port clients are told to connect to; default the listener's
	// address. A port of 0 means the listener's port.
	AdvertisedAddr string
	NodeID         int32
	// Version is the gateway's release, announced to the fleet (the operators' node table).
	Version string
	// Brokers is the fleet; empty means this node alone at AdvertisedAddr.
	Brokers []kafka.Broker

	// IggyAddrs are the Iggy nodes; empty starts the embedded store in-process with Embedded,
	// which the gateway then reaches through memory (IggyTLS does not apply; Embedded.TLS
	// covers its listener for native Iggy clients).
	IggyAddrs                  []string
	IggyUsername, IggyPassword string
	IggyTLS                    *tls.Config
	// IggyTopicDurability is how far every topic the gateway creates in Iggy (Kafka topics, the
	// coordinator log and the meta topics) writes a batch before Iggy acknowledges it
	// (iggy.Durability); default iggy.DurabilityWrite.
	IggyTopicDurability iggy.Durability
	Embedded            store.Config
	// Store, when set with IggyAddrs empty, is an embedded store already running in this
	// process (StartFleet's): the gateway reaches it through memory instead of starting its
	// own from Embedded, and leaves it running on Shutdown.
	Store *store.Server

	Stream            string // default "kafka"
	AutoCreateTopics  bool
	DefaultPartitions int32  // default 1
	MaxRequestBytes   int32  // default 100 MiB
	FetchMaxBytes     int64  // cap of a Fetch answer's MaxBytes (kafka.Config.FetchMaxBytes); default 4 MiB
	FetchCodec        string // codec of fetched batches (bridge.Config.FetchCodec); default "producer"
	TailCacheBytes    int64  // producers' batches kept for tail consumers (bridge.Config.TailCacheBytes); default 64 MiB, negative: off
	FetchCacheBytes   int64  // rebuilt batches kept for other readers (bridge.Config.FetchCacheBytes); default 256 MiB, negative: off
	KeptBatchesBytes  int64  // disk budget for producers' batches beyond the tail (bridge.Config.KeptBatchesBytes); 0 or negative: in memory
	KeptBatchesDir    string // directory of those files (bridge.Config.KeptBatchesDir)
	// ProducerIDExpiration drops an idempotent producer's state on a partition this long after
	// its last batch there (bridge.Config.ProducerIDExpiration); default 24h.
	ProducerIDExpiration time.Duration
	// Limits of the Kafka listener (kafka.Config): requests being read or handled share BufferBudget
	// (default 32 MiB); a request must arrive within ReadTimeout of its first byte (5s); a
	// connection is closed when silent for IdleTimeout (10m), AuthTimeout before SASL (10s).
	BufferBudget                          int64
	ReadTimeout, IdleTimeout, AuthTimeout time.Duration

	TLS         *tls.Config // Kafka listener TLS
	SASL        bool        // require SASL (PLAIN, SCRAM); each connection acts as its Iggy user
	MetricsAddr string      // /metrics, /healthz, /readyz; empty: no HTTP listener
	Logger      *slog.Logger

	// CoordinatorLog keeps consumer groups on the coordinator log, so any gateway of the fleet
	// takes another's groups over with their members, generations and offsets (the serve
	// command turns it on by default). Off, the lowest node id coordinates every group and
	// offsets are Iggy consumer offsets.
	CoordinatorLog bool
	// Transactions serves Kafka's transactions: the coordinator APIs (InitProducerId with a
	// transactional id, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
	// DescribeTransactions, ListTransactions) from the coordinator log (package txn),
	// transactional batches, their markers and READ_COMMITTED reads, and WriteTxnMarkers, which
	// gateways send each other to end a transaction's group offsets; it needs CoordinatorLog.
	// Off by default (docs/transactions.md says what is not done yet).
	Transactions bool
	// TransactionVersion is the level of Kafka's transaction.version feature the gateway
	// finalizes with Transactions (ApiVersions): 2 (transactions v2, KIP-890 part 2) or 1
	// (transactions v1, for a fleet that still has gateways of a release without v2); zero
	// means 2 (docs/transactions.md, "Transactions v2").
	TransactionVersion int16
	// HeartbeatInterval is Iggy's heartbeat interval H (the embedded store's own when IggyAddrs
	// is empty): Iggy ends the session of a group member silent for 1.2 H, and the gateway's
	// lease on its coordinator partitions lives in such a session. Default: Embedded's, else
	// 30 s. CheckHeartbeat says which values are refused.
	HeartbeatInterval time.Duration
	// DrainTimeout bounds Shutdown's wait for Kafka connections to finish their requests after
	// the gateway left the fleet's coordinator group; default 30 s.
	DrainTimeout time.Duration
	// ConsumerHeartbeatInterval is the heartbeat interval KIP-848 consumer-group members are
	// told, ConsumerSessionTimeout how long a silent one stays a member; defaults Kafka's 5 s
	// and 45 s.
	ConsumerHeartbeatInterval, ConsumerSessionTimeout time.Duration
	// Client quotas (package quota): rates are measured over QuotaWindows samples of
	// QuotaWindowSize (Kafka's quota.window.num and quota.window.size.seconds; default 11 and
	// 1 s), and the fleet's quotas are read again every QuotaRefresh (default 1 s), the bound
	// within which a change made through another gateway is enforced here.
	QuotaWindowSize, QuotaRefresh time.Duration
	QuotaWindows                  int
}

// LeasePoll is how often a gateway reads its coordinator lease from Iggy (and so speaks on the
// lease session); the margin is what the gateway keeps between giving its partitions up and the
// earliest moment Iggy could hand them to another gateway.
const (
	LeasePoll   = 100 * time.Millisecond
	leaseMargin = 100 * time.Millisecond
)

// CheckHeartbeat refuses an Iggy heartbeat interval h that would let Iggy evict a live gateway:
// Iggy ends a silent member's session after 1.2 h, while the gateway speaks on its lease session
// every LeasePoll and stops answering as coordinator two reads plus a margin before that moment,
// so 1.2 h must exceed 2 x LeasePoll + the margin.
func CheckHeartbeat(h time.Duration) error {
	evict := h * 6 / 5
	need := 2*LeasePoll + leaseMargin
	if evict > need {
		return nil
	}
	return fmt.Errorf("heartbeat interval %v lets Iggy evict a live gateway: Iggy ends the session of a member silent "+
		"for 1.2 x %v = %v; a gateway reads its lease every %v and gives its partitions up once its last read is older "+
		"than that minus 2 x %v + %v = %v, which leaves it no time to serve: use an interval above %v",
		h, h, evict, LeasePoll, LeasePoll, leaseMargin, need, need*5/6)
}

// Gateway is a running gateway: the Kafka listener, its bridge to Iggy, and (without IggyAddrs)
// the embedded store it owns.
type Gateway struct {
	cfg   Config
	log   *slog.Logger
	kafka *kafka.Server
	ln    net.Listener

	store     *store.Server
	storeDone chan error
	admin     *iggy.Client
	bridge    *bridge.Bridge
	coord     *coordinator.Coordinator
	users     *userClients
	watch     *userWatch
	quotas    *quota.Manager
	metrics   *metrics
	peers     *peers
	httpSrv   *http.Server
	httpLn    net.Listener

	serveDone chan error
}

// Start brings a gateway up; the Kafka listener accepts connections when it returns. ctx bounds
// the start only.
func Start(ctx context.Context, cfg Config) (*Gateway, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1:9092"
	}
	if cfg.Stream == "" {
		cfg.Stream = "kafka"
	}
	if cfg.DefaultPartitions <= 0 {
		cfg.DefaultPartitions = 1
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 30 * time.Second
		if len(cfg.IggyAddrs) == 0 && cfg.Embedded.HeartbeatInterval > 0 {
			cfg.HeartbeatInterval = cfg.Embedded.HeartbeatInterval
		}
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if err := CheckHeartbeat(cfg.HeartbeatInterval); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, metrics: newMetrics()}
	if err := g.start(ctx); err != nil {
		switch {
		case g.serveDone != nil:
			g.kafka.Shutdown(context.Background())
			<-g.serveDone
		case g.ln != nil:
			g.ln.Close()
		}
		g.close()
		return nil, err
	}
	return g, nil
}

func (g *Gateway) start(ctx context.Context) (err error) {
	cfg := g.cfg
	addrs, user, pass := cfg.IggyAddrs, cfg.IggyUsername, cfg.IggyPassword
	iggyTLS := cfg.IggyTLS
	var iggyLocal func() (iggy.Local, error)
	if len(addrs) == 0 {
		srv := cfg.Store
		if srv == nil {
			if g.store, err = store.New(cfg.Embedded); err != nil {
				return fmt.Errorf("gateway: starting the embedded store: %w", err)
			}
			g.storeDone = make(chan error, 1)
			go func() { g.storeDone <- g.store.Serve(context.Background()) }()
			srv = g.store
		}
		addrs = []string{srv.Addr().String()}
		if user == "" {
			user, pass = cfg.Embedded.RootUsername, cfg.Embedded.RootPassword
		}
		// The gateway's requests to its own store run in the requesting goroutine
		// (store.Local): loopback TCP costs two kernel copies per batch each way and two
		// goroutine switches per request, and TLS would protect nothing that leaves the
		// process. The TCP listener stays for native Iggy clients.
		iggyLocal = func() (iggy.Local, error) {
			l, err := srv.Local()
			if err != nil {
				return nil, err
			}
			return l, nil
		}
		iggyTLS = nil
	}
	dial := func(ctx context.Context, l login, pool int) (*iggy.Client, error) {
		return iggy.Dial(ctx, iggy.Config{
			Addrs: addrs, Username: l.user, Password: l.password, Token: l.token, TLS: iggyTLS, Local: iggyLocal, PoolSize: pool,
			Logger: cfg.Logger.With("component", "iggy"), TopicDurability: cfg.IggyTopicDurability,
		})
	}
	if g.admin, err = dial(ctx, login{user: user, password: pass}, 0); err != nil {
		return fmt.Errorf("gateway: connecting to Iggy at %v: %w", addrs, err)
	}
	if g.bridge, err = bridge.New(ctx, g.admin, bridge.Config{
		Stream:               cfg.Stream,
		AutoCreateTopics:     cfg.AutoCreateTopics,
		DefaultPartitions:    cfg.DefaultPartitions,
		FetchCodec:           cfg.FetchCodec,
		TailCacheBytes:       cfg.TailCacheBytes,
		FetchCacheBytes:      cfg.FetchCacheBytes,
		KeptBatchesBytes:     cfg.KeptBatchesBytes,
		KeptBatchesDir:       cfg.KeptBatchesDir,
		ProducerIDExpiration: cfg.ProducerIDExpiration,
		Metrics:              g.metrics.bridge,
		Logger:               cfg.Logger.With("component", "bridge"),
		// The coordinator starts after the bridge and before the Kafka listener, the only
		// way a topic is deleted through the bridge.
		TopicDeleted: func(string) { g.coord.TopicsDeleted() },
		// Likewise, no produce reaches the bridge before the coordinator started.
		LeadersMoved: func() uint64 { return g.coord.ViewChanges() },
		Fenced:       func() bool { return g.coord.WriteFenced() },
	}); err != nil {
		return fmt.Errorf("gateway: preparing Iggy stream %q: %w", cfg.Stream, err)
	}
	g.users = &userClients{
		bridge:  g.bridge,
		service: g.admin,
		stream:  cfg.Stream,
		clock:   clock.Real,
		users:   make(map[loginKey]*userClient),
		dial: func(ctx context.Context, l login) (*iggy.Client, error) {
			return dial(ctx, l, 2)
		},
	}
	scramCreds, err := newSCRAMStore(ctx, g.admin, g.users, cfg.Stream, cfg.Logger.With("component", "scram"))
	if err != nil {
		return err
	}

	if g.ln, err = net.Listen("tcp", cfg.Bind); err != nil {
		return fmt.Errorf("gateway: kafka listener: %w", err)
	}
	host, port, err := advertised(cfg.AdvertisedAddr, g.ln.Addr())
	if err != nil {
		return err
	}
	g.peers = &peers{user: user, password: pass, sasl: cfg.SASL, tls: cfg.TLS != nil, tlsRoots: cfg.TLS}
	markers := txnMarkers{b: g.bridge, c: g.admin}
	if g.coord, err = coordinator.Start(ctx, coordinator.Config{
		Client:            g.admin,
		Stream:            cfg.Stream,
		NodeID:            cfg.NodeID,
		Version:           cfg.Version,
		Host:              host,
		Port:              port,
		Brokers:           cfg.Brokers,
		Logger:            cfg.Logger,
		Log:               cfg.CoordinatorLog,
		HeartbeatInterval: cfg.HeartbeatInterval,
		LeasePoll:         LeasePoll,
		Metrics:           g.metrics.coord,
		Transactions:      cfg.Transactions,
		Mark:              markers.Mark,
		Peer:              g.peers.send,
		Txn: txn.Config{
			Markers: markers,
			ProducerID: func(ctx context.Context) (int64, error) {
				id, _, err := g.bridge.As(g.admin).InitProducerID(ctx)
				return id, err
			},
		},
		Groups: group.Config{
			ConsumerHeartbeatInterval: cfg.ConsumerHeartbeatInterval,
			ConsumerSessionTimeout:    cfg.ConsumerSessionTimeout,
			Metrics:                   g.metrics.groups,
		},
	}); err != nil {
		return fmt.Errorf("gateway: starting the group coordinator: %w", err)
	}
	g.quotas = quota.New(quota.Config{
		Source:     g.bridge,
		Refresh:    cfg.QuotaRefresh,
		WindowSize: cfg.QuotaWindowSize,
		Windows:    cfg.QuotaWindows,
		Logger:     cfg.Logger.With("component", "quotas"),
	})
	g.quotas.Start()
	kcfg := kafka.Config{
		CheckReachable:   true,
		Quotas:           g.quotas,
		NodeID:           cfg.NodeID,
		AdvertisedHost:   host,
		AdvertisedPort:   port,
		Brokers:          cfg.Brokers,
		MaxRequestBytes:  cfg.MaxRequestBytes,
		FetchMaxBytes:    cfg.FetchMaxBytes,
		BufferBudget:     cfg.BufferBudget,
		ReadTimeout:      cfg.ReadTimeout,
		IdleTimeout:      cfg.IdleTimeout,
		AuthIdleTimeout:  cfg.AuthTimeout,
		AutoCreateTopics: cfg.AutoCreateTopics,
		TLS:              cfg.TLS,
		SASL:             cfg.SASL,
		Storage:          g.bridge.As(g.admin),
		SCRAM:            scramCreds,
		BrokerConfigs:    g.bridge,
		ClientQuotas:     g.bridge,
		Groups:           g.coord.Groups(),
		Txns:             g.coord.Txns(),
		Fleet:            g.coord.Fleet(),
		Observer:         g.metrics,
		Logger:           cfg.Logger.With("component", "kafka"),
	}
	kcfg.TransactionVersion = transactionVersion(cfg.TransactionVersion)
	if cfg.SASL {
		kcfg.Authenticate = g.users.authenticate
		kcfg.ACLs = &aclStore{admin: g.admin, stream: cfg.Stream}
	}
	if g.kafka, err = kafka.NewServer(kcfg); err != nil {
		return err
	}
	g.users.closeUser = g.kafka.CloseUser
	g.metrics.limitsOf(g)
	g.serveDone = make(chan error, 1)
	go func() { g.serveDone <- g.kafka.Serve(g.ln) }()
	if cfg.SASL {
		g.watch = startUserWatch(g.users, g.kafka, clock.Real, cfg.Logger.With("component", "users"))
	}

	if cfg.MetricsAddr != "" {
		if g.httpLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("gateway: metrics listener: %w", err)
		}
		g.httpSrv = &http.Server{Handler: g.metrics.handler(g.ready), ReadHeaderTimeout: 10 * time.Second}
		go g.httpSrv.Serve(g.httpLn)
	}
	g.log.Info("gateway listening", "kafka", g.ln.Addr().String(), "advertised", net.JoinHostPort(host, strconv.Itoa(int(port))),
		"node_id", cfg.NodeID, "iggy", addrs, "stream", cfg.Stream, "sasl", cfg.SASL, "tls", cfg.TLS != nil)
	return nil
}

// advertised resolves the address clients are told to use.
func advertised(addr string, ln net.Addr) (string, int32, error) {
	lhost, lportText, _ := net.SplitHostPort(ln.String())
	lport, _ := strconv.Atoi(lportText)
	if addr == "" {
		if ip := net.ParseIP(lhost); ip == nil || ip.IsUnspecified() {
			lhost = "localhost"
		}
		return lhost, int32(lport), nil
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("gateway: advertised address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("gateway: advertised port %q: %w", portText, err)
	}
	if port == 0 {
		port = uint64(lport)
	}
	return host, int32(port), nil
}

// Addr is the Kafka listener's address.
func (g *Gateway) Addr() net.Addr { return g.ln.Addr() }

// MetricsAddr is the metrics listener's address, or nil without one.
func (g *Gateway) MetricsAddr() net.Addr {
	if g.httpLn == nil {
		return nil
	}
	return g.httpLn.Addr()
}

// StoreAddr is the embedded store's address (for native Iggy clients), or nil when the gateway
// uses an external Iggy.
func (g *Gateway) StoreAddr() net.Addr {
	if g.store == nil {
		return nil
	}
	return g.store.Addr()
}

func (g *Gateway) ready(ctx context.Context) error {
	if !g.kafka.Listening() {
		return errors.New("kafka listener is down")
	}
	if err := g.admin.Ping(ctx); err != nil {
		return fmt.Errorf("iggy: %w", err)
	}
	return nil
}

// Shutdown hands this gateway's consumer groups to the rest of the fleet first (it leaves the
// coordinator's Iggy group, so the others take its partitions over at once and members keep
// their generations; it keeps listening until the others serve them and every member it served
// was told, within DrainTimeout), then stops accepting Kafka connections and lets every connection finish
// and answer the requests it already read (long polls answer at once) within DrainTimeout, then
// releases Iggy and stops the embedded store. When ctx or the drain timeout ends first,
// in-flight requests are abandoned and that error is returned.
func (g *Gateway) Shutdown(ctx context.Context) error {
	lctx, lcancel := context.WithTimeout(ctx, g.cfg.DrainTimeout)
	if err := g.coord.Leave(lctx); err != nil {
		g.log.Warn("leaving the coordinator group", "err", err)
	}
	// Controlled shutdown: once the others no longer name this gateway in Metadata, it becomes
	// a lame duck (leads nothing, answers Produce and Fetch NOT_LEADER_OR_FOLLOWER), so clients
	// refresh and move while their connections still work; then it stops listening.
	if err := g.waitLeadersMoved(lctx, clock.Real); err != nil {
		g.log.Warn("another gateway still names this one leader; answering NOT_LEADER_OR_FOLLOWER anyway", "err", err)
	}
	g.kafka.LameDuck()
	g.coord.WaitSeen(lctx)
	// The members of the groups it coordinated learn of the move from their next request here
	// and then look for the new coordinator, asking any broker, this one too: a closed port
	// instead ends a franz-go classic member's session. So the listener stays until the others
	// serve its log partitions, every member was told (kafka.WaitMembersTold), and the others
	// have read the new claims.
	g.coord.WaitHandedOver(lctx)
	_ = g.kafka.WaitMembersTold(lctx)
	g.coord.WaitSeen(lctx)
	lcancel()
	dctx, cancel := context.WithTimeout(ctx, g.cfg.DrainTimeout)
	defer cancel()
	err := g.kafka.Shutdown(dctx)
	if serr := <-g.serveDone; serr != nil && !errors.Is(serr, kafka.ErrServerClosed) && err == nil {
		err = serr
	}
	if g.httpSrv != nil {
		if herr := g.httpSrv.Shutdown(ctx); herr != nil && err == nil {
			err = herr
		}
	}
	if cerr := g.close(); cerr != nil && err == nil {
		err = cerr
	}
	g.log.Info("gateway stopped", "err", err)
	return err
}

// close releases what Start acquired after the Kafka listener, in reverse order; the Kafka
// server must be stopped first.
func (g *Gateway) close() error {
	var errs []error
	if g.coord != nil {
		errs = append(errs, g.coord.Close())
	}
	if g.peers != nil {
		g.peers.close()
	}
	if g.watch != nil {
		g.watch.close()
	}
	if g.quotas != nil {
		g.quotas.Close()
	}
	if g.users != nil {
		g.users.close()
	}
	if g.bridge != nil {
		errs = append(errs, g.bridge.Close())
	}
	if g.admin != nil {
		errs = append(errs, g.admin.Close())
	}
	if g.store != nil {
		errs = append(errs, g.store.Close())
		if serr := <-g.storeDone; serr != nil {
			errs = append(errs, serr)
		}
	}
	return errors.Join(errs...)
}

// Run starts a gateway, serves until ctx ends, then shuts it down, giving in-flight requests up
// to DrainTimeout.
func Run(ctx context.Context, cfg Config) error {
	g, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return g.Shutdown(context.WithoutCancel(ctx))
}

// transactionVersion is the transaction.version a gateway finalizes: v, zero meaning 2.
func transactionVersion(v int16) int16 {
	if v == 0 {
		return 2
	}
	return v
}
