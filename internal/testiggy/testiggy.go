// Package testiggy owns the choice of the Iggy server that the process tests and the interop
// scripts put in front of their gateways, and how each server process is started. By default it
// is the embedded store as a process of its own (`iggy-kafka store`). When the variable named by
// Env holds the path of an `iggy-server` binary built from Apache Iggy's source, it is the real
// server instead: one node, or a cluster of three with clustering on. Every node gets a data
// directory of its own under the caller's directory, its own loopback ports, and no
// configuration file of the caller's (the server's built-in defaults plus the settings below,
// given as IGGY_* variables, the way Iggy's own test harness configures it).
//
// The two things to know are Plan, which turns a Target into the processes to run (argv,
// environment, the address each serves Iggy clients on), and Process, one of them. Starting,
// signalling and restarting the processes stays with the caller: the fleet tests' process
// type, or the iggytarget program the shell scripts start. The settings that matter to the
// gateway are chosen here once for both servers: the heartbeat interval (how soon a silent
// consumer-group member is evicted) and whether every write is fsynced before it is
// acknowledged.
package testiggy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Env names the variable that switches the tests to a real Iggy server: the path of an
// iggy-server binary. The config package ignores variables under IGGY_KAFKA_TEST_, so gateways
// that inherit it still start.
const Env = "IGGY_KAFKA_TEST_IGGY_SERVER"

// NodesEnv names the variable that asks for a cluster (3) instead of one node (1, the default)
// of the real server, for runs whose caller does not choose.
const NodesEnv = "IGGY_KAFKA_TEST_IGGY_NODES"

// Root user of every server the tests start; the gateway's defaults.
const (
	Username = "iggy"
	Password = "iggy"
)

// Target is the server a run wants.
type Target struct {
	// Real is the iggy-server binary; empty for the embedded store.
	Real string
	// Nodes is 1, or 3 for a cluster of the real server.
	Nodes int
	// IggyKafka is the iggy-kafka binary that runs the embedded store.
	IggyKafka string
	// Dir holds each node's data directory.
	Dir string
	// Addrs are the client addresses, one per node; ReplicaAddrs the cluster's replica
	// addresses, one per node when Nodes > 1.
	Addrs, ReplicaAddrs []string
	// Heartbeat is the server's heartbeat interval: a consumer-group member silent for 1.2 times
	// it is evicted. Zero keeps the server's default.
	Heartbeat time.Duration
	// Fsync makes every write reach the disk before it is acknowledged: the store's
	// --fsync always; for the real server, each topic's enforce_fsync, which the gateway sets
	// when it creates a topic, so here it only documents the intent.
	Fsync bool
	// LogLevel is the server's log level; empty for info.
	LogLevel string
}

// FromEnv is the target the environment asks for: the real server when Env is set (Nodes from
// NodesEnv, 1 when unset), else the embedded store run by iggyKafka. Addresses and the
// directory are the caller's to fill.
func FromEnv(iggyKafka string) (Target, error) {
	t := Target{Real: os.Getenv(Env), Nodes: 1, IggyKafka: iggyKafka}
	if t.Real == "" {
		return t, nil
	}
	if _, err := os.Stat(t.Real); err != nil {
		return t, fmt.Errorf("%s=%s: %w", Env, t.Real, err)
	}
	if n := os.Getenv(NodesEnv); n != "" {
		v, err := strconv.Atoi(n)
		if err != nil || (v != 1 && v != 3) {
			return t, fmt.Errorf("%s=%q: want 1 or 3", NodesEnv, n)
		}
		t.Nodes = v
	}
	return t, nil
}

// Kind names the target for logs and skips: "store", "iggy-server" or "iggy-server cluster".
func (t Target) Kind() string {
	switch {
	case t.Real == "":
		return "store"
	case t.Nodes > 1:
		return "iggy-server cluster"
	default:
		return "iggy-server"
	}
}

// PortsPerNode is how many free loopback addresses Plan needs for each node: the client port,
// and for a cluster the replica port.
func (t Target) PortsPerNode() int {
	if t.Real != "" && t.Nodes > 1 {
		return 2
	}
	return 1
}

// Process is one server process to run.
type Process struct {
	Name string
	// Args[0] is the executable.
	Args []string
	// Env is added to the caller's environment (after it, so it wins).
	Env []string
	// Addr is where it serves Iggy clients once it listens.
	Addr string
	// DataDir is its data directory, kept across restarts.
	DataDir string
}

// Plan is the processes of the target, one per node, in node order.
func Plan(t Target) ([]Process, error) {
	if t.Nodes == 0 {
		t.Nodes = 1
	}
	if len(t.Addrs) != t.Nodes {
		return nil, fmt.Errorf("testiggy: %d client addresses for %d nodes", len(t.Addrs), t.Nodes)
	}
	if t.Real == "" {
		if t.Nodes != 1 {
			return nil, fmt.Errorf("testiggy: the embedded store runs one node, not %d", t.Nodes)
		}
		return []Process{t.store()}, nil
	}
	if t.Nodes > 1 && len(t.ReplicaAddrs) != t.Nodes {
		return nil, fmt.Errorf("testiggy: %d replica addresses for %d nodes", len(t.ReplicaAddrs), t.Nodes)
	}
	ps := make([]Process, t.Nodes)
	for i := range ps {
		ps[i] = t.real(i)
	}
	return ps, nil
}

func (t Target) store() Process {
	dir := filepath.Join(t.Dir, "store")
	fsync := "never"
	if t.Fsync {
		fsync = "always"
	}
	level := t.LogLevel
	if level == "" {
		level = "info"
	}
	args := []string{t.IggyKafka, "store", "--listen", t.Addrs[0], "--data", dir, "--fsync", fsync, "--log-level", level}
	if t.Heartbeat > 0 {
		args = append(args, "--heartbeat-interval", t.Heartbeat.String())
	}
	return Process{Name: "store", Args: args, Addr: t.Addrs[0], DataDir: dir}
}

// real is node i of the real server. The settings, as IGGY_* variables over the server's
// built-in defaults:
//   - only the TCP transport, on the node's own loopback port;
//   - one shard, not pinned, and the smallest memory pool: the machines running the tests
//     are small and shared;
//   - the root user iggy/iggy, which the gateway logs in as by default;
//   - a configuration path that does not exist, so a config.toml in the working directory is
//     never read;
//   - for a cluster, the roster of the three nodes on loopback, each picked by --replica-id, and
//     the shortest election the server allows.
func (t Target) real(i int) Process {
	name := "iggy"
	if t.Nodes > 1 {
		name = fmt.Sprintf("iggy-%d", i)
	}
	dir := filepath.Join(t.Dir, name)
	env := []string{
		"IGGY_CONFIG_PATH=" + filepath.Join(t.Dir, name+".absent.toml"),
		"IGGY_SYSTEM_PATH=" + dir,
		"IGGY_TCP_ENABLED=true",
		"IGGY_TCP_ADDRESS=" + t.Addrs[i],
		"IGGY_HTTP_ENABLED=false",
		"IGGY_QUIC_ENABLED=false",
		"IGGY_WEBSOCKET_ENABLED=false",
		"IGGY_SYSTEM_SHARDING_CPU_ALLOCATION=1",
		"IGGY_SYSTEM_SHARDING_PIN_CORES=false",
		"IGGY_SYSTEM_MEMORY_POOL_SIZE=512 MiB",
		"IGGY_SHARD_RUNTIME_CAPACITY=256",
		"IGGY_ROOT_USERNAME=" + Username,
		"IGGY_ROOT_PASSWORD=" + Password,
		"IGGY_TELEMETRY_ENABLED=false",
	}
	if t.LogLevel != "" {
		env = append(env, "IGGY_SYSTEM_LOGGING_LEVEL="+t.LogLevel)
	}
	if t.Heartbeat > 0 {
		env = append(env, "IGGY_HEARTBEAT_ENABLED=true", "IGGY_HEARTBEAT_INTERVAL="+iggyDuration(t.Heartbeat))
	}
	args := []string{t.Real}
	if t.Nodes > 1 {
		// The shortest election the server allows (heartbeat_timeout at least 2 s and 4 x the
		// commit broadcast): a lost leader is replaced in about 2 s instead of 5.
		env = append(env, "IGGY_CLUSTER_ENABLED=true", "IGGY_CLUSTER_NAME=iggy-kafka-test",
			"IGGY_MESSAGE_BUS_RECONNECT_PERIOD=100ms", "IGGY_CLUSTER_HEARTBEAT_TIMEOUT=2s", "IGGY_CLUSTER_COMMIT_BROADCAST_INTERVAL=500ms")
		for n := range t.Nodes {
			env = append(env,
				fmt.Sprintf("IGGY_CLUSTER_NODES_%d_NAME=node-%d", n, n),
				fmt.Sprintf("IGGY_CLUSTER_NODES_%d_IP=127.0.0.1", n),
				fmt.Sprintf("IGGY_CLUSTER_NODES_%d_REPLICA_ID=%d", n, n),
				fmt.Sprintf("IGGY_CLUSTER_NODES_%d_PORTS_TCP=%s", n, port(t.Addrs[n])),
				fmt.Sprintf("IGGY_CLUSTER_NODES_%d_PORTS_TCP_REPLICA=%s", n, port(t.ReplicaAddrs[n])))
		}
		args = append(args, "--replica-id", strconv.Itoa(i))
	}
	return Process{Name: name, Args: args, Env: env, Addr: t.Addrs[i], DataDir: dir}
}

// iggyDuration writes d as Iggy's configuration reads durations ("2500 ms").
func iggyDuration(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

func port(addr string) string {
	return addr[strings.LastIndexByte(addr, ':')+1:]
}
