package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

func newServeCmd(a *app) *cobra.Command {
	return withSettings(&cobra.Command{
		Use:   "serve",
		Short: "Run a Kafka-protocol gateway in front of Apache Iggy",
		Long: `Run a Kafka-protocol gateway. Kafka clients produce and consume through it; the data lives in
Iggy, Kafka topic T as Iggy topic T in stream --stream, one Kafka record per Iggy message at the
same offset.

Without --iggy the gateway starts the embedded store in-process (data in --data, reachable by
native Iggy clients on --store-listen) and logs in as its root user. With --iggy it connects to
an Iggy server or cluster that a fleet of gateways shares.

--fleet N runs N gateways in this one process, node ids 1..N with Kafka on consecutive ports
from --bind's, sharing the embedded store (or --iggy) and every other setting; SIGTERM stops
them in node order, each handing its groups on and draining as a lone gateway does, then the
store. The fleet chooses --node-id, --brokers and --advertised-addr itself.`,
		Example: `  # a Kafka endpoint on localhost:9092, data in ./data
  iggy-kafka serve

  # gateway 1 of a fleet of two sharing one Iggy server
  iggy-kafka serve --iggy 127.0.0.1:8090 --node-id 1 --bind :9092 \
      --brokers 1@localhost:9092,2@localhost:9093

  # a local fleet: the embedded store on 127.0.0.1:8090 and gateways 1, 2 and 3 on :9092..:9094
  iggy-kafka serve --fleet 3

  # TLS for Kafka clients, SASL (PLAIN and SCRAM) as Iggy users, metrics on :9644
  iggy-kafka serve --tls-cert cert.pem --tls-key key.pem --sasl --metrics-addr :9644`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.values.Bool("print-config") {
				a.printConfig(cmd)
				return nil
			}
			log, err := a.logger(cmd)
			if err != nil {
				return err
			}
			cfg, err := a.gatewayConfig()
			if err != nil {
				return err
			}
			if limit, keep := memoryLimit(a.values, a.environ); !keep {
				debug.SetMemoryLimit(limit)
			}
			cfg.Logger = log
			cfg.Embedded.Logger = log.With("component", "store")
			if n := int(a.values.Int("fleet")); n > 0 {
				err = gateway.RunFleet(cmd.Context(), cfg, n)
			} else {
				err = gateway.Run(cmd.Context(), cfg)
			}
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("%w\n(another process holds that address: choose another --bind or --store-listen, or point --iggy at a store that is already running)", err)
			}
			return err
		},
	})
}

func (a *app) gatewayConfig() (gateway.Config, error) {
	v := a.values
	cfg := gateway.Config{
		Bind:                 v.String("bind"),
		AdvertisedAddr:       v.String("advertised-addr"),
		IggyAddrs:            v.List("iggy"),
		IggyUsername:         v.String("iggy-username"),
		IggyPassword:         v.String("iggy-password"),
		IggyTopicDurability:  durability(v.String("iggy-topic-durability")),
		Stream:               v.String("stream"),
		AutoCreateTopics:     v.Bool("auto-create-topics"),
		SASL:                 v.Bool("sasl"),
		MetricsAddr:          v.String("metrics-addr"),
		DefaultPartitions:    int32(v.Int("default-partitions")),
		FetchCodec:           v.String("fetch-codec"),
		TailCacheBytes:       cacheSize(v.Bytes("tail-cache")),
		FetchCacheBytes:      cacheSize(v.Bytes("fetch-cache")),
		KeptBatchesBytes:     v.Bytes("kept-batches"),
		KeptBatchesDir:       v.String("kept-batches-dir"),
		ProducerIDExpiration: v.Duration("producer-id-expiration"),
		Transactions:         v.Bool("transactions"),
		TransactionVersion:   int16(v.Int("transaction-version")),
	}
	cfg.Version, _, _ = buildInfo()
	fleet, err := fleetSize(v)
	if err != nil {
		return cfg, err
	}
	node := v.Int("node-id")
	if node < 0 || node > 1<<31-1 {
		return cfg, v.Invalid("node-id", "must be in 0..2147483647")
	}
	cfg.NodeID = int32(node)
	if tv := v.Int("transaction-version"); tv < 1 || tv > 2 {
		return cfg, v.Invalid("transaction-version", "must be 1 or 2")
	}
	if p := v.Int("default-partitions"); p < 1 || p > 1000 {
		return cfg, v.Invalid("default-partitions", "must be in 1..1000")
	}
	if n := v.Bytes("max-request-bytes"); n < 1024 || n > 1<<30 {
		return cfg, v.Invalid("max-request-bytes", "must be between 1KiB and 1GiB")
	} else {
		cfg.MaxRequestBytes = int32(n)
	}
	if n := v.Bytes("fetch-max-bytes"); n < 1024 || n > 1<<30 {
		return cfg, v.Invalid("fetch-max-bytes", "must be between 1KiB and 1GiB")
	} else {
		cfg.FetchMaxBytes = n
	}
	if err := checkLimits(v); err != nil {
		return cfg, err
	}
	if cfg.IdleTimeout = v.Duration("idle-timeout"); cfg.IdleTimeout <= 0 {
		return cfg, v.Invalid("idle-timeout", "must be above zero")
	}
	cfg.BufferBudget = v.Bytes("buffer-budget")
	cfg.ReadTimeout, cfg.AuthTimeout = v.Duration("read-timeout"), v.Duration("auth-timeout")
	cfg.CoordinatorLog = v.Bool("coordinator-log")
	if cfg.DrainTimeout = v.Duration("drain-timeout"); cfg.DrainTimeout <= 0 {
		return cfg, v.Invalid("drain-timeout", "must be above zero")
	}
	cfg.ConsumerHeartbeatInterval, cfg.ConsumerSessionTimeout = v.Duration("consumer-heartbeat-interval"), v.Duration("consumer-session-timeout")
	if cfg.ConsumerHeartbeatInterval <= 0 || cfg.ConsumerHeartbeatInterval > time.Hour {
		return cfg, v.Invalid("consumer-heartbeat-interval", "must be above zero and at most 1h")
	}
	if cfg.ConsumerSessionTimeout <= cfg.ConsumerHeartbeatInterval {
		return cfg, v.Invalid("consumer-session-timeout", "must be above --consumer-heartbeat-interval (%s)", cfg.ConsumerHeartbeatInterval)
	}
	if cfg.QuotaWindowSize = v.Duration("quota-window-size"); cfg.QuotaWindowSize < time.Millisecond || cfg.QuotaWindowSize > time.Hour {
		return cfg, v.Invalid("quota-window-size", "must be between 1ms and 1h")
	}
	if n := v.Int("quota-window-num"); n < 2 || n > 1000 {
		return cfg, v.Invalid("quota-window-num", "must be in 2..1000")
	} else {
		cfg.QuotaWindows = int(n)
	}
	if cfg.QuotaRefresh = v.Duration("quota-refresh"); cfg.QuotaRefresh < 10*time.Millisecond || cfg.QuotaRefresh > time.Hour {
		return cfg, v.Invalid("quota-refresh", "must be between 10ms and 1h")
	}
	cfg.HeartbeatInterval = v.Duration("heartbeat-interval")
	if err := gateway.CheckHeartbeat(cfg.HeartbeatInterval); err != nil {
		return cfg, v.Invalid("heartbeat-interval", "%v", err)
	}
	if cfg.Stream == "" || len(cfg.Stream) > 250 {
		return cfg, v.Invalid("stream", "must be 1..250 bytes")
	}
	if cfg.AdvertisedAddr == "" && fleet == 0 {
		host, port, _ := net.SplitHostPort(cfg.Bind)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		cfg.AdvertisedAddr = net.JoinHostPort(host, port)
	}
	brokers, err := parseBrokers(v.List("brokers"))
	if err != nil {
		return cfg, v.Invalid("brokers", "%v", err)
	}
	cfg.Brokers = brokers
	if len(brokers) > 0 && !slices.ContainsFunc(brokers, func(b kafka.Broker) bool { return b.NodeID == cfg.NodeID }) {
		return cfg, v.Invalid("node-id", "node %d is not in --brokers", cfg.NodeID)
	}
	if cfg.TLS, err = listenerTLS(v); err != nil {
		return cfg, err
	}
	for _, addr := range cfg.IggyAddrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return cfg, v.Invalid("iggy", "%q is not host:port", addr)
		}
	}
	if cfg.IggyTLS, err = clientTLS(v, "iggy-tls"); err != nil {
		return cfg, err
	}
	if len(cfg.IggyAddrs) == 0 {
		if cfg.Embedded, err = a.storeConfig(v.String("store-listen"), false); err != nil {
			return cfg, err
		}
		cfg.IggyUsername, cfg.IggyPassword = cfg.Embedded.RootUsername, cfg.Embedded.RootPassword
	}
	if err := keptBatches(v, &cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// keptBatches checks --kept-batches and chooses the default of --kept-batches-dir: beside the
// embedded store's data, or in the user's cache directory with --iggy (the temporary directory
// without one). A directory that cannot be written keeps the batches in memory instead.
func keptBatches(v *config.Values, cfg *gateway.Config) error {
	if n := cfg.KeptBatchesBytes; n > 0 && n < 1<<20 {
		return v.Invalid("kept-batches", "must be 0 (in memory) or at least 1MiB")
	}
	if cfg.KeptBatchesBytes <= 0 || cfg.KeptBatchesDir != "" {
		return nil
	}
	if len(cfg.IggyAddrs) == 0 {
		cfg.KeptBatchesDir = filepath.Join(cfg.Embedded.DataDir, "kept-batches")
		return nil
	}
	if cache, err := os.UserCacheDir(); err == nil {
		cfg.KeptBatchesDir = filepath.Join(cache, "iggy-kafka", "kept-batches")
	} // else the bridge's default, in the temporary directory
	return nil
}

// fleetSize reads --fleet, refusing the settings a fleet chooses itself for each gateway.
func fleetSize(v *config.Values) (int, error) {
	n := v.Int("fleet")
	if n == 0 {
		return 0, nil
	}
	if n < 0 || n > gateway.MaxFleet {
		return 0, v.Invalid("fleet", "must be in 0..%d", gateway.MaxFleet)
	}
	if _, port, err := net.SplitHostPort(v.String("bind")); err == nil && port == "0" {
		return 0, v.Invalid("bind", "--fleet needs a port: gateway i listens on it plus i-1")
	}
	for _, name := range []string{"node-id", "brokers", "advertised-addr"} {
		if src := v.Source(name); src.Kind != "default" {
			return 0, usageError(fmt.Errorf("--fleet chooses each gateway's node id (1..%d), --brokers and --advertised-addr itself; "+
				"%s is set (from %s): unset it, or run one gateway per process without --fleet", n, name, src))
		}
	}
	return int(n), nil
}

// parseBrokers reads the fleet, id@host:port each.
func parseBrokers(list []string) ([]kafka.Broker, error) {
	var out []kafka.Broker
	seen := map[int32]bool{}
	for _, item := range list {
		idText, addr, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("%q is not id@host:port", item)
		}
		id, err := strconv.ParseInt(idText, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%q: broker id %q is not a number", item, idText)
		}
		host, portText, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return nil, fmt.Errorf("%q: %q is not host:port", item, addr)
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || port == 0 {
			return nil, fmt.Errorf("%q: port %q is not in 1..65535", item, portText)
		}
		if seen[int32(id)] {
			return nil, fmt.Errorf("broker id %d appears twice", id)
		}
		seen[int32(id)] = true
		out = append(out, kafka.Broker{NodeID: int32(id), Host: host, Port: int32(port)})
	}
	return out, nil
}

// cacheSize maps a cache size setting (tail-cache, fetch-cache) onto gateway.Config, where 0 is
// the default and a negative size turns the cache off.
func cacheSize(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// durability maps iggy-topic-durability, whose values the registry has checked, onto the gateway's.
func durability(s string) iggy.Durability {
	d, _ := iggy.ParseDurability(s)
	return d
}
