package main

import (
	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
)

// settings is the one list of every setting: each has a flag (--name), an environment variable
// (IGGY_KAFKA_NAME) and a config file key (name). The configuration table in docs/configuration.md follows it.
// operatorCommands read the coordinator log and ask the gateways.
var operatorCommands = []string{"inspect", "claims", "replay", "drain", "group", "tail", "transactions"}

var settings = config.NewRegistry(
	// Every command.
	config.Setting{Name: config.ConfigKey, Usage: "config file (default $XDG_CONFIG_HOME/iggy-kafka/config.yaml, then /etc/iggy-kafka/config.yaml)"},

	// Long-running commands.
	config.Setting{Name: "log-format", Kind: config.Enum, Default: "logfmt", Enum: []string{"logfmt", "json", "text"}, Usage: "log line format", Commands: []string{"serve", "store"}},
	config.Setting{Name: "log-level", Kind: config.Enum, Default: "info", Enum: []string{"debug", "info", "warn", "error"}, Usage: "lowest level logged", Commands: []string{"serve", "store"}},
	config.Setting{Name: "print-config", Kind: config.Bool, Default: "false", Usage: "print the effective configuration with the source of each value, then exit", Commands: []string{"serve", "store"}},

	// The Kafka gateway.
	config.Setting{Name: "bind", Kind: config.HostPort, Default: ":9092", Usage: "address the Kafka listener binds", Commands: []string{"serve"}},
	config.Setting{Name: "advertised-addr", Kind: config.HostPort, Usage: "host:port Kafka clients are told to connect to (default: the bind address, localhost when it has no host)", Commands: []string{"serve"}},
	config.Setting{Name: "node-id", Kind: config.Int, Default: "0", Usage: "this gateway's Kafka broker id in the fleet", Commands: []string{"serve"}},
	config.Setting{Name: "brokers", Kind: config.List, Usage: "the fleet as id@host:port,... (default: this gateway alone)", Commands: []string{"serve"}},
	config.Setting{Name: "fleet", Kind: config.Int, Default: "0", Usage: "run N gateways in this process (node ids 1..N, Kafka on consecutive ports from --bind's) sharing the embedded store or --iggy; 0: one gateway", Commands: []string{"serve"}},
	config.Setting{Name: "iggy", Kind: config.List, Usage: "Iggy server addresses host:port,... (default: run the embedded store in-process)", Commands: []string{"serve"}},
	config.Setting{Name: "iggy-username", Default: "iggy", Usage: "Iggy user the gateway logs in as", Commands: []string{"serve"}},
	config.Setting{Name: "iggy-password", Default: "iggy", Secret: true, Usage: "password of --iggy-username", Commands: []string{"serve"}},
	config.Setting{Name: "iggy-tls", Kind: config.Bool, Default: "false", Usage: "connect to Iggy over TLS", Commands: []string{"serve"}},
	config.Setting{Name: "iggy-tls-ca", Usage: "PEM file of the CA that signed the Iggy server's certificate (default: system roots)", Commands: []string{"serve"}},
	config.Setting{Name: "iggy-tls-server-name", Usage: "server name expected in the Iggy server's certificate (default: the host of --iggy)", Commands: []string{"serve"}},
	config.Setting{Name: "stream", Default: "kafka", Usage: "Iggy stream that holds the Kafka topics", Commands: []string{"serve"}},
	config.Setting{Name: "auto-create-topics", Kind: config.Bool, Default: "true", Usage: "create unknown topics on Metadata and Produce, as Kafka does", Commands: []string{"serve"}},
	config.Setting{Name: "default-partitions", Kind: config.Int, Default: "1", Usage: "partitions of an auto-created topic", Commands: []string{"serve"}},
	config.Setting{Name: "fetch-codec", Kind: config.Enum, Default: "producer", Enum: bridge.FetchCodecs, Usage: "codec of the batches Fetch answers with, for topics without a compression.type of their own: producer keeps each batch's own, none saves both sides compressing on a fast network", Commands: []string{"serve"}},
	config.Setting{Name: "fetch-cache", Kind: config.Bytes, Default: "256MiB", Usage: "memory, apart from the Go heap and taken as it fills, that keeps the batches fetches rebuilt from the store, so other groups reading the same records get those bytes, and in a sixteenth of it the producers' batches the tail cache let go; 0 turns it off", Commands: []string{"serve"}},
	config.Setting{Name: "kept-batches", Kind: config.Bytes, Default: "1GiB", Usage: "disk budget for the producers' batches the tail cache let go, kept in files of --kept-batches-dir (scratch, removed on exit) so a consumer far behind the tail gets them as they came, as Kafka serves its log through the page cache; 0: a sixteenth of --fetch-cache in memory instead", Commands: []string{"serve"}},
	config.Setting{Name: "kept-batches-dir", Usage: "directory of --kept-batches' files (default: kept-batches in --data with the embedded store, else in the user's cache directory under iggy-kafka); one the gateway cannot write keeps them in memory instead, with a warning", Commands: []string{"serve"}},
	config.Setting{Name: "tail-cache", Kind: config.Bytes, Default: "64MiB", Usage: "memory that keeps producers' own batches of the recent tail, so a consumer at the tail gets them as they came; 0 turns it off", Commands: []string{"serve"}},
	config.Setting{Name: "transaction-version", Kind: config.Int, Default: "2", Usage: "with --transactions, the transaction.version feature the gateway finalizes: 2 has clients use transactions v2 (KIP-890 part 2, an epoch bump per transaction), 1 transactions v1 (while a fleet still has gateways of a release without v2): docs/transactions.md", Commands: []string{"serve"}},
	config.Setting{Name: "transactions", Kind: config.Bool, Default: "false", Usage: "serve Kafka transactions (transactional producers, READ_COMMITTED reads) from the coordinator log, with a consumer group's offsets committed in a transaction (TxnOffsetCommit); without it a transactional producer is refused at its start: docs/transactions.md", Commands: []string{"serve"}},
	config.Setting{Name: "producer-id-expiration", Kind: config.Duration, Default: "24h", Usage: "an idempotent producer's state on a partition is dropped this long after its last batch there (Kafka's producer.id.expiration.ms)", Commands: []string{"serve"}},
	config.Setting{Name: "fetch-max-bytes", Kind: config.Bytes, Default: "4MiB", Usage: "largest Fetch answer, whatever a consumer asks for (Kafka's broker fetch.max.bytes); a partition's first batch is still answered whole", Commands: []string{"serve"}},
	config.Setting{Name: "max-request-bytes", Kind: config.Bytes, Default: "100MiB", Usage: "largest Kafka request accepted", Commands: []string{"serve"}},
	config.Setting{Name: "idle-timeout", Kind: config.Duration, Default: "10m", Usage: "a Kafka connection silent this long is closed (Kafka's connections.max.idle.ms)", Commands: []string{"serve"}},
	config.Setting{Name: "auth-timeout", Kind: config.Duration, Default: "10s", Usage: "a connection silent this long before it authenticates (SASL, Iggy login) is closed", Commands: []string{"serve", "store"}},
	config.Setting{Name: "read-timeout", Kind: config.Duration, Default: "5s", Usage: "a request must arrive whole within this long of its first byte, or its connection is closed", Commands: []string{"serve", "store"}},
	config.Setting{Name: "buffer-budget", Kind: config.Bytes, Default: "32MiB", Usage: "memory for requests above 64KiB being read or handled, shared by a listener's connections; past it reading waits (one larger request is still read)", Commands: []string{"serve", "store"}},
	config.Setting{Name: "memory-limit", Kind: config.Bytes, Default: "192MiB", Usage: "soft limit of the process's Go memory: near it the collector runs more often rather than let the heap grow to twice what is live; 0 turns it off (default: GOMEMLIMIT when that is set)", Commands: []string{"serve"}},
	config.Setting{Name: "sasl", Kind: config.Bool, Default: "false", Usage: "require SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); each connection acts as its Iggy user", Commands: []string{"serve"}},
	config.Setting{Name: "metrics-addr", Kind: config.HostPort, Usage: "address for Prometheus /metrics, /healthz and /readyz (default: off)", Commands: []string{"serve"}},
	config.Setting{Name: "coordinator-log", Kind: config.Bool, Default: "true", Usage: "keep consumer groups on the coordinator log in Iggy, so any gateway takes another's groups over (off: the lowest node id coordinates, offsets are Iggy consumer offsets)", Commands: []string{"serve"}},
	config.Setting{Name: "consumer-heartbeat-interval", Kind: config.Duration, Default: "5s", Usage: "heartbeat interval KIP-848 consumer-group members are told (Kafka's group.consumer.heartbeat.interval.ms)", Commands: []string{"serve"}},
	config.Setting{Name: "consumer-session-timeout", Kind: config.Duration, Default: "45s", Usage: "a KIP-848 consumer-group member silent this long is fenced (Kafka's group.consumer.session.timeout.ms)", Commands: []string{"serve"}},
	config.Setting{Name: "quota-window-size", Kind: config.Duration, Default: "1s", Usage: "client quota rates are measured in samples this long (Kafka's quota.window.size.seconds)", Commands: []string{"serve"}},
	config.Setting{Name: "quota-window-num", Kind: config.Int, Default: "11", Usage: "client quota rates are measured over this many samples (Kafka's quota.window.num)", Commands: []string{"serve"}},
	config.Setting{Name: "quota-refresh", Kind: config.Duration, Default: "1s", Usage: "how often a gateway reads the fleet's client quotas again: a change through another gateway is enforced within it", Commands: []string{"serve"}},
	config.Setting{Name: "drain-timeout", Kind: config.Duration, Default: "30s", Usage: "on SIGTERM, how long Kafka connections may finish their requests after the gateway handed its groups on", Commands: []string{"serve"}},
	config.Setting{Name: "store-listen", Kind: config.HostPort, Default: "127.0.0.1:8090", Usage: "address of the embedded store, for native Iggy clients (serve without --iggy)", Commands: []string{"serve"}},

	// TLS of the command's own listener: Kafka for serve, Iggy for store.
	config.Setting{Name: "tls-cert", Usage: "PEM certificate of the listener (with --tls-key turns TLS on)", Commands: []string{"serve", "store"}},
	config.Setting{Name: "tls-key", Usage: "PEM private key of --tls-cert", Commands: []string{"serve", "store"}},

	// The embedded store (store, and serve without --iggy).
	config.Setting{Name: "listen", Kind: config.HostPort, Default: "127.0.0.1:8090", Usage: "address the Iggy-compatible store listens on", Commands: []string{"store"}},
	config.Setting{Name: "data", Default: "data", Usage: "directory of the embedded store's data", Commands: []string{"serve", "store"}},
	config.Setting{Name: "iggy-topic-durability", Kind: config.Enum, Default: "write", Enum: []string{"write", "fsync", "server"}, Usage: "how far every topic the gateway creates in Iggy writes a batch before Iggy acknowledges it: write (to its file: a kill of Iggy loses nothing acknowledged), fsync (to disk: a power loss neither), server (Iggy's defaults: the real server keeps up to 1024 messages per partition in memory, and a kill loses them)", Commands: []string{"serve"}},
	config.Setting{Name: "fsync", Kind: config.Enum, Default: "interval", Enum: []string{"always", "interval", "never"}, Usage: "when appended messages are flushed to disk", Commands: []string{"serve", "store"}},
	config.Setting{Name: "fsync-interval", Kind: config.Duration, Default: "1s", Usage: "flush period of --fsync interval", Commands: []string{"serve", "store"}},
	config.Setting{Name: "segment-size", Kind: config.Bytes, Default: "1GiB", Usage: "size at which a partition's segment file is rolled", Commands: []string{"serve", "store"}},
	config.Setting{Name: "root-username", Default: "iggy", Usage: "root user created in a new store (a development default: change it)", Commands: []string{"serve", "store"}},
	config.Setting{Name: "root-password", Default: "iggy", Secret: true, Usage: "password of the root user created in a new store", Commands: []string{"serve", "store"}},
	config.Setting{Name: "heartbeat-interval", Kind: config.Duration, Default: "30s", Usage: "consumer-group members silent for 1.2x this are evicted (serve --iggy: the Iggy server's heartbeat.interval)", Commands: []string{"serve", "store"}},

	// Operator commands: how they reach Iggy (settings of their own, so that pointing them at
	// a remote store never turns a bare serve into a gateway of that store), how they reach
	// Kafka and how they print.
	config.Setting{Name: "operator-iggy", Flag: "iggy", Kind: config.List, Usage: "Iggy server addresses the operator commands read, host:port,... (default: 127.0.0.1:8090, where serve's embedded store listens)", Commands: operatorCommands},
	config.Setting{Name: "operator-iggy-username", Flag: "iggy-username", Default: "iggy", Usage: "Iggy user the operator commands log in as", Commands: operatorCommands},
	config.Setting{Name: "operator-iggy-password", Flag: "iggy-password", Default: "iggy", Secret: true, Usage: "password of --iggy-username", Commands: operatorCommands},
	config.Setting{Name: "operator-iggy-tls", Flag: "iggy-tls", Kind: config.Bool, Default: "false", Usage: "connect to Iggy over TLS", Commands: operatorCommands},
	config.Setting{Name: "operator-iggy-tls-ca", Flag: "iggy-tls-ca", Usage: "PEM file of the CA that signed the Iggy server's certificate (default: system roots)", Commands: operatorCommands},
	config.Setting{Name: "operator-iggy-tls-server-name", Flag: "iggy-tls-server-name", Usage: "server name expected in the Iggy server's certificate (default: the host of --iggy)", Commands: operatorCommands},
	config.Setting{Name: "operator-stream", Flag: "stream", Default: "kafka", Usage: "Iggy stream that holds the Kafka topics of the fleet the operator commands read", Commands: operatorCommands},
	config.Setting{Name: "kafka-bootstrap", Kind: config.List, Usage: "Kafka addresses of gateways the operator commands ask, host:port,... (default: those the gateways announce in the log, else localhost:9092)", Commands: operatorCommands},
	config.Setting{Name: "kafka-tls", Kind: config.Bool, Default: "false", Usage: "connect to the gateways over TLS", Commands: operatorCommands},
	config.Setting{Name: "kafka-tls-ca", Usage: "PEM file of the CA that signed the gateways' certificates (default: system roots)", Commands: operatorCommands},
	config.Setting{Name: "kafka-tls-server-name", Usage: "server name expected in the gateways' certificates (default: the host dialled)", Commands: operatorCommands},
	config.Setting{Name: "kafka-sasl-username", Usage: "SASL PLAIN user for the gateways (an Iggy user; empty: no SASL)", Commands: operatorCommands},
	config.Setting{Name: "kafka-sasl-password", Secret: true, Usage: "password of --kafka-sasl-username", Commands: operatorCommands},
	config.Setting{Name: "output", Kind: config.Enum, Default: "text", Enum: []string{"text", "json", "yaml"}, Usage: "output format, also -o", Commands: []string{"inspect", "claims", "replay", "drain", "group", "tail", "transactions", "version"}},
	config.Setting{Name: "request-timeout", Kind: config.Duration, Default: "10s", Usage: "bound of each request to Iggy or a gateway", Commands: operatorCommands},
)
