package iggy

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Config says where the servers are and how to log in. The zero value
// connects to a local development server as the default root user.
type Config struct {
	// Addrs are the host:port addresses of the Iggy nodes to try, in order.
	// Default 127.0.0.1:8090.
	Addrs []string
	// Username and Password log in with a password; Token, when set, logs in
	// with a personal access token instead. Default user iggy/iggy.
	Username, Password string
	Token              string
	// TLS, when set, wraps every connection. Without a ServerName the host of
	// the dialled address is used for verification.
	TLS *tls.Config
	// Dial, when set, opens the connection to an address in place of TCP,
	// for instance an in-process pipe to an embedded store. TLS, when set,
	// still wraps what it returns.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Local, when set, opens connections to a server in this process that runs each request
	// in the caller's goroutine (see Local); Addrs then only name it, and Dial and TLS are not
	// used.
	Local func() (Local, error)
	// PoolSize is the number of connections of a Client. Default 4.
	PoolSize int
	// DialTimeout bounds one dial plus login. Default 5s.
	DialTimeout time.Duration
	// RequestTimeout bounds a request whose context has no earlier deadline.
	// Default 30s, the official SDK's budget.
	RequestTimeout time.Duration
	// Logger receives connection events. Default: discard.
	Logger *slog.Logger
	// Clock runs the reconnect backoff and the wait for a cluster leader. Default: the wall
	// clock.
	Clock clock.Clock
	// TopicDurability is how far every topic this client creates writes a batch before Iggy
	// acknowledges it. Default DurabilityWrite.
	TopicDurability Durability
}

// Durability is how far a topic has taken a batch before Iggy acknowledges it: the topic
// options messages_required_to_save and enforce_fsync, set when the topic is created (Iggy
// cannot change them later). Measured on the real server (0.9.0-edge.5): with its defaults a
// SIGKILL of the server lost 970 of 2,000 acknowledged messages of one partition, with
// messages_required_to_save = 1 none.
type Durability uint8

const (
	// DurabilityWrite writes every batch to its segment file before the acknowledgement
	// (messages_required_to_save = 1): a kill of the Iggy process loses nothing acknowledged;
	// a power loss may lose what the operating system had not written yet.
	DurabilityWrite Durability = iota
	// DurabilityFsync also syncs it to disk first (enforce_fsync): nothing acknowledged is lost
	// to a power loss either.
	DurabilityFsync
	// DurabilityServer leaves the server's defaults: the real server keeps up to 1,024 messages
	// (or 1 MiB) of a partition in memory before it writes them, and a kill loses them.
	DurabilityServer
)

// ParseDurability reads write, fsync or server.
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "write":
		return DurabilityWrite, nil
	case "fsync":
		return DurabilityFsync, nil
	case "server":
		return DurabilityServer, nil
	}
	return 0, fmt.Errorf("topic durability %q: one of write, fsync, server", s)
}

// options are the topic options of d.
func (d Durability) options() []wire.TLVEntry {
	switch d {
	case DurabilityWrite:
		return []wire.TLVEntry{wire.Uint32Entry(wire.OptMessagesRequiredToSave, 1)}
	case DurabilityFsync:
		return []wire.TLVEntry{wire.Uint32Entry(wire.OptMessagesRequiredToSave, 1), wire.BoolEntry(wire.OptEnforceFsync, true)}
	}
	return nil
}

const (
	defaultAddr           = "127.0.0.1:8090"
	defaultUser           = "iggy"
	defaultPoolSize       = 4
	defaultDialTimeout    = 5 * time.Second
	defaultRequestTimeout = 30 * time.Second

	// Reconnect backoff: fast enough that a restarted local server is found
	// within a second, slow enough not to spin against a dead one.
	backoffMin = 20 * time.Millisecond
	backoffMax = 2 * time.Second

	// transientRetry paces the resend of a request the server answered with
	// a transient code (57, 58), as the official SDK does.
	transientRetry = 50 * time.Millisecond

	// notAcceptedRecheck is how long a request is resent to a node that answers
	// TransientNotAccepted before the client gives up that connection and asks
	// the cluster for its leader (the official SDK waits 2 s; a leader change
	// settles well within this).
	notAcceptedRecheck = 300 * time.Millisecond

	// maxRedirects bounds leader following so two nodes that each name the
	// other cannot bounce a connection forever.
	maxRedirects = 3
)

// keepAliveInterval matches the official SDK's heartbeat: well inside the
// server's default staleness window of 1.2 x 30 s. Tests shorten it.
var keepAliveInterval = 5 * time.Second

// idleProbeAfter is how long a pooled connection may sit unused before it
// is checked for a peer close before use; a probe costs one syscall.
var idleProbeAfter = time.Second

func (c Config) withDefaults() Config {
	if len(c.Addrs) == 0 {
		c.Addrs = []string{defaultAddr}
	} else {
		c.Addrs = append([]string(nil), c.Addrs...)
	}
	if c.Token == "" && c.Username == "" && c.Password == "" {
		c.Username, c.Password = defaultUser, defaultUser
	}
	if c.PoolSize <= 0 {
		c.PoolSize = defaultPoolSize
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = defaultDialTimeout
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.Or(c.Clock)
	return c
}
