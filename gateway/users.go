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
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// userClients logs SASL users in to Iggy and keeps one client per user and way of logging in,
// so a user's many Kafka connections share a small Iggy pool. A PLAIN user logs in with its
// password; a SCRAM user with the Iggy token its credential holds (scramstore.go), and only as
// the user that token belongs to. A cached login is trusted for recheckAfter; after that the
// next authentication logs in again. The user watcher (userwatch.go) drops a user's clients
// within a second of Iggy refusing it; recheckAfter bounds the rest, such as an Iggy server that
// keeps a user's sessions alive across a password change.
type userClients struct {
	dial   func(ctx context.Context, l login) (*iggy.Client, error)
	bridge *bridge.Bridge
	clock  clock.Clock // times recheckAfter
	// closeUser closes the Kafka connections authenticated as a user (kafka.Server.CloseUser);
	// nil before the listener exists.
	closeUser func(user string) int

	mu    sync.Mutex
	users map[loginKey]*userClient
	// retired are clients replaced by a login with a new secret, by login; connections
	// authenticated earlier may still use them until the user is dropped or the gateway closes.
	retired map[loginKey][]*iggy.Client
	// nRetired is the number of clients in retired, for iggy_kafka_sasl_retired_clients.
	nRetired atomic.Int64
	closed   bool
}

// login is one way a user logs in to Iggy: with its password, or with a personal access token.
type login struct {
	user, password, token string
	// via is the SASL mechanism the Kafka connection authenticated with; the logins of one user
	// by different mechanisms are cached apart, so that they do not retire each other.
	via string
}

type loginKey struct{ user, via string }

type userClient struct {
	secret   [32]byte
	verified time.Time
	client   *iggy.Client
}

const recheckAfter = time.Minute

// maxRetired bounds the retired clients kept per login: past it, every retired client of the
// login is closed with the user's Kafka connections, which reconnect with the current secret.
// Each retired client holds an Iggy pool, and a user whose password changes over and over would
// otherwise add one per change for as long as the gateway runs.
const maxRetired = 4

var errClosed = errors.New("gateway: closed")

// authenticate checks PLAIN credentials by logging in to Iggy as the user.
func (u *userClients) authenticate(ctx context.Context, user, password string) (kafka.Storage, error) {
	return u.login(ctx, login{user: user, password: password, via: "PLAIN"})
}

// authenticateToken logs in to Iggy with token, which must be user's.
func (u *userClients) authenticateToken(ctx context.Context, user, via, token string) (kafka.Storage, error) {
	return u.login(ctx, login{user: user, token: token, via: via})
}

func (u *userClients) login(ctx context.Context, l login) (kafka.Storage, error) {
	secret := sha256.Sum256([]byte(l.user + "\x00" + l.password + "\x00" + l.token))
	key := loginKey{l.user, l.via}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	if c, ok := u.users[key]; ok && subtle.ConstantTimeCompare(c.secret[:], secret[:]) == 1 && u.clock.Now().Sub(c.verified) < recheckAfter {
		u.mu.Unlock()
		return u.bridge.As(c.client), nil
	}
	u.mu.Unlock()

	client, err := u.dial(ctx, l)
	if err != nil {
		return nil, err
	}
	if l.token != "" {
		if err := tokenIsUsers(ctx, client, l.user); err != nil {
			client.Close()
			return nil, err
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		client.Close()
		return nil, errClosed
	}
	if old, ok := u.users[key]; ok {
		if old.secret == secret {
			// A periodic recheck: keep the client connections already use.
			client.Close()
			old.verified = u.clock.Now()
			return u.bridge.As(old.client), nil
		}
		// The secret changed. The old client may still serve connections authenticated
		// earlier; it is closed with the gateway rather than under them.
		if u.retired == nil {
			u.retired = make(map[loginKey][]*iggy.Client)
		}
		u.retired[key] = append(u.retired[key], old.client)
		u.nRetired.Add(1)
		if len(u.retired[key]) > maxRetired {
			// The user's connections go first, so none is left on a closed client; the new
			// login is cached before they reconnect.
			if u.closeUser != nil {
				u.closeUser(l.user)
			}
			for _, c := range u.retired[key] {
				c.Close()
			}
			u.nRetired.Add(-int64(len(u.retired[key])))
			delete(u.retired, key)
		}
	}
	u.users[key] = &userClient{secret: secret, verified: u.clock.Now(), client: client}
	return u.bridge.As(client), nil
}

// errNotTheUser is a token login that signed in as another Iggy user than the Kafka user.
var errNotTheUser = errors.New("gateway: the Iggy token of the credential belongs to another user")

// tokenIsUsers checks that client, logged in with a token, acts as the Iggy user named user: a
// credential record that someone with write access to the meta stream put there with a token
// of their own must not let a Kafka user act as another Iggy user.
func tokenIsUsers(ctx context.Context, client *iggy.Client, user string) error {
	d, err := client.GetUser(ctx, wire.NamedID(user))
	if err != nil {
		if errors.Is(err, wire.Unauthorized) || errors.Is(err, wire.ResourceNotFound) {
			return errNotTheUser
		}
		return err
	}
	if d.ID != client.UserID() {
		return errNotTheUser
	}
	return nil
}

// clientOf returns a cached client of user, nil when there is none.
func (u *userClients) clientOf(user string) *iggy.Client {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c, ok := u.users[loginKey{user, "PLAIN"}]; ok {
		return c.client
	}
	for k, c := range u.users {
		if k.user == user {
			return c.client
		}
	}
	return nil
}

// retiredClients is how many retired clients are kept (iggy_kafka_sasl_retired_clients).
func (u *userClients) retiredClients() int64 { return u.nRetired.Load() }

// watched is one cached login and the client its connections use.
type watched struct {
	user   string
	key    loginKey
	client *iggy.Client
}

// cached lists the users with a cached client.
func (u *userClients) cached() []watched {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]watched, 0, len(u.users))
	for k, c := range u.users {
		out = append(out, watched{user: k.user, key: k, client: c.client})
	}
	return out
}

// has reports whether user has a cached client.
func (u *userClients) has(user string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k := range u.users {
		if k.user == user {
			return true
		}
	}
	return false
}

// drop forgets the login if its cached client is still client, so the next authentication logs
// in again, and returns the clients to close once the user's connections are gone (nil when a
// new login replaced client meanwhile).
func (u *userClients) drop(key loginKey, client *iggy.Client) []*iggy.Client {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, ok := u.users[key]
	if !ok || c.client != client {
		return nil
	}
	delete(u.users, key)
	out := append(u.retired[key], client)
	u.nRetired.Add(-int64(len(u.retired[key])))
	delete(u.retired, key)
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
