package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// userClients logs SASL users in to Iggy and keeps one client per user, so a user's many Kafka
// connections share a small Iggy pool. A cached login is trusted for recheckAfter; after that
// the next authentication logs in again, so a changed or revoked Iggy password stops working
// here within that time.
type userClients struct {
	dial   func(ctx context.Context, user, password string) (*iggy.Client, error)
	bridge *bridge.Bridge

	mu      sync.Mutex
	users   map[string]*userClient
	retired []*iggy.Client
	closed  bool
}

type userClient struct {
	secret   [32]byte
	verified time.Time
	client   *iggy.Client
}

const recheckAfter = time.Minute

var errClosed = errors.New("gateway: closed")

func (u *userClients) authenticate(ctx context.Context, user, password string) (kafka.Storage, error) {
	secret := sha256.Sum256([]byte(user + "\x00" + password))
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	if c, ok := u.users[user]; ok && subtle.ConstantTimeCompare(c.secret[:], secret[:]) == 1 && time.Since(c.verified) < recheckAfter {
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
			old.verified = time.Now()
			return u.bridge.As(old.client), nil
		}
		// The password changed. The old client may still serve connections authenticated
		// earlier; it is closed with the gateway rather than under them.
		u.retired = append(u.retired, old.client)
	}
	u.users[user] = &userClient{secret: secret, verified: time.Now(), client: client}
	return u.bridge.As(client), nil
}

func (u *userClients) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for _, c := range u.users {
		c.client.Close()
	}
	for _, c := range u.retired {
		c.Close()
	}
	u.users = nil
	u.retired = nil
}
