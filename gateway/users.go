package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// userClients logs SASL users in to Iggy and keeps one client per user, so a user's many Kafka
// connections share a small Iggy pool. A cached login is trusted for recheckAfter; after that
// the next authentication logs in again. The user watcher (userwatch.go) drops a user's client
// within a second of Iggy refusing it; recheckAfter bounds the rest, such as an Iggy server that
// keeps a user's sessions alive across a password change.
type userClients struct {
	dial   func(ctx context.Context, user, password string) (*iggy.Client, error)
	bridge *bridge.Bridge
	clock  clock.Clock // times recheckAfter
	// closeUser closes the Kafka connections authenticated as a user (kafka.Server.CloseUser);
	// nil before the listener exists.
	closeUser func(user string) int

	mu    sync.Mutex
	users map[string]*userClient
	// retired are clients replaced by a login with a new password, by user; connections
	// authenticated earlier may still use them until the user is dropped or the gateway closes.
	retired map[string][]*iggy.Client
	// nRetired is the number of clients in retired, for iggy_kafka_sasl_retired_clients.
	nRetired atomic.Int64
	closed   bool
}

type userClient struct {
	secret   [32]byte
	verified time.Time
	client   *iggy.Client
}

const recheckAfter = time.Minute

// maxRetired bounds the retired clients kept per user: past it, every retired client of the
// user is closed with the user's Kafka connections, which reconnect with the current password.
// Each retired client holds an Iggy pool, and a user whose password changes over and over would
// otherwise add one per change for as long as the gateway runs.
const maxRetired = 4

var errClosed = errors.New("gateway: closed")

func (u *userClients) authenticate(ctx context.Context, user, password string) (kafka.Storage, error) {
	secret := sha256.Sum256([]byte(user + "\x00" + password))
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	if c, ok := u.users[user]; ok && subtle.ConstantTimeCompare(c.secret[:], secret[:]) == 1 && u.clock.Now().Sub(c.verified) < recheckAfter {
		u.mu.Unlock()
		return u.bridge.As(c.client), nil
	}
	u.mu.Unlock()

	client, err := u.dial(ctx, user, password)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		client.Close()
		return nil, errClosed
	}
	if old, ok := u.users[user]; ok {
		if old.secret == secret {
			// A periodic recheck: keep the client connections already use.
			client.Close()
			old.verified = u.clock.Now()
			return u.bridge.As(old.client), nil
		}
		// The password changed. The old client may still serve connections authenticated
		// earlier; it is closed with the gateway rather than under them.
		if u.retired == nil {
			u.retired = make(map[string][]*iggy.Client)
		}
		u.retired[user] = append(u.retired[user], old.client)
		u.nRetired.Add(1)
		if len(u.retired[user]) > maxRetired {
			// The user's connections go first, so none is left on a closed client; the new
			// login is cached before they reconnect.
			if u.closeUser != nil {
				u.closeUser(user)
			}
			for _, c := range u.retired[user] {
				c.Close()
			}
			u.nRetired.Add(-int64(len(u.retired[user])))
			delete(u.retired, user)
		}
	}
	u.users[user] = &userClient{secret: secret, verified: u.clock.Now(), client: client}
	return u.bridge.As(client), nil
}

// retiredClients is how many retired clients are kept (iggy_kafka_sasl_retired_clients).
func (u *userClients) retiredClients() int64 { return u.nRetired.Load() }

// watched is one cached user and the client its connections use.
type watched struct {
	user   string
	client *iggy.Client
}

// cached lists the users with a cached client.
func (u *userClients) cached() []watched {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]watched, 0, len(u.users))
	for name, c := range u.users {
		out = append(out, watched{user: name, client: c.client})
	}
	return out
}

// has reports whether user has a cached client.
func (u *userClients) has(user string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.users[user]
	return ok
}

// drop forgets user if its cached client is still client, so the next authentication logs in
// again, and returns the clients to close once the user's connections are gone (nil when a new
// login replaced client meanwhile).
func (u *userClients) drop(user string, client *iggy.Client) []*iggy.Client {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, ok := u.users[user]
	if !ok || c.client != client {
		return nil
	}
	delete(u.users, user)
	out := append(u.retired[user], client)
	u.nRetired.Add(-int64(len(u.retired[user])))
	delete(u.retired, user)
	return out
}

func (u *userClients) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for _, c := range u.users {
		c.client.Close()
	}
	for _, cs := range u.retired {
		for _, c := range cs {
			c.Close()
		}
	}
	u.users = nil
	u.retired = nil
	u.nRetired.Store(0)
}
