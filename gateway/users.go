package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
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
	// service is the gateway's own Iggy login, which the connections of provisioned credentials
	// act through with their user's permissions checked by the gateway, and which resolves the
	// stream and topic ids of the gateway's questions (authorizer).
	service *iggy.Client
	// stream is the gateway's Kafka stream.
	stream string
	// streamView is the stream's ids for the authorizers, made at the first login.
	streamOnce sync.Once
	streamView *streamView
	clock      clock.Clock // times recheckAfter
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
	// admin, when not empty, is the Iggy user whose token token is: an administrator who
	// provisioned user's SCRAM credential. The login is then the administrator's and proves
	// that the administrator still manages users; the connection acts through the gateway's own
	// login with user's permissions, which the gateway checks (bridge.AsChecked) and reads
	// through the administrator's login.
	admin string
	// via is the SASL mechanism the Kafka connection authenticated with; the logins of one user
	// by different mechanisms are cached apart, so that they do not retire each other.
	via string
}

type loginKey struct{ user, via string }

type userClient struct {
	secret   [32]byte
	verified time.Time
	client   *iggy.Client
	// admin is login.admin: the client is not the user's own.
	admin string
	// permits reads the user's permissions (through client), shared by its connections.
	permits *userPermits
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

// authenticateProvisioned logs in to Iggy with token, which must be admin's, an Iggy user with
// the manage-users permission, for a connection that acts as user.
func (u *userClients) authenticateProvisioned(ctx context.Context, user, admin, via, token string) (kafka.Storage, error) {
	return u.login(ctx, login{user: user, admin: admin, token: token, via: via})
}

// storage is the Storage a connection of login l acts through on the cached login c.
func (u *userClients) storage(l login, c *userClient) kafka.Storage {
	// Called with u.mu held or not: the view has a lock of its own.
	u.streamOnce.Do(func() { u.streamView = &streamView{service: u.service, name: u.stream, clock: u.clock} })
	who := (&authorizer{permits: c.permits, stream: u.streamView}).allowed
	if l.admin == "" {
		return u.bridge.AsUser(c.client, who)
	}
	return u.bridge.AsChecked(u.service, c.permits.get, who)
}

func (u *userClients) login(ctx context.Context, l login) (kafka.Storage, error) {
	secret := sha256.Sum256([]byte(l.user + "\x00" + l.password + "\x00" + l.token + "\x00" + l.admin))
	key := loginKey{l.user, l.via}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	if c, ok := u.users[key]; ok && subtle.ConstantTimeCompare(c.secret[:], secret[:]) == 1 && u.clock.Now().Sub(c.verified) < recheckAfter {
		u.mu.Unlock()
		return u.storage(l, c), nil
	}
	u.mu.Unlock()

	client, err := u.dial(ctx, l)
	if err != nil {
		return nil, err
	}
	if l.token != "" {
		owner := l.user
		if l.admin != "" {
			owner = l.admin
		}
		if err := tokenIsUsers(ctx, client, owner); err != nil {
			client.Close()
			return nil, err
		}
	}
	if l.admin != "" {
		if err := managesUsers(ctx, client, l.admin); err != nil {
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
			return u.storage(l, old), nil
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
	c := &userClient{secret: secret, verified: u.clock.Now(), client: client, admin: l.admin,
		permits: newUserPermits(client, l.user, u.clock)}
	u.users[key] = c
	return u.storage(l, c), nil
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

// errNotAdmin is a provisioned credential whose administrator no longer has the manage-users
// permission: the credential stops working with it.
var errNotAdmin = errors.New("gateway: the administrator who provisioned the SCRAM credential no longer has Iggy's manage-users permission")

// managesUsers checks that client, logged in as admin, has Iggy's manage-users permission.
func managesUsers(ctx context.Context, client *iggy.Client, admin string) error {
	d, err := client.GetUser(ctx, wire.NamedID(admin))
	if err != nil {
		return err
	}
	if !authz.Allowed(d.ID, d.Permissions, authz.ManageUsers) {
		return errNotAdmin
	}
	return nil
}

// clientOf returns a cached client logged in as user itself, nil when there is none: a client
// of an administrator that a provisioned credential of user logs in with is never one.
func (u *userClients) clientOf(user string) *iggy.Client {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c, ok := u.users[loginKey{user, "PLAIN"}]; ok {
		return c.client
	}
	for k, c := range u.users {
		if k.user == user && c.admin == "" {
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

// permitsFor is how long the permissions a provisioned login read are used before they are
// read again: a permission change applies within it, as the user watcher's round.
const permitsFor = userWatchInterval

// userPermits reads an Iggy user's permissions for the checked Storage of a provisioned login,
// through the administrator's client.
type userPermits struct {
	client *iggy.Client
	user   string
	clock  clock.Clock

	mu    sync.Mutex
	at    time.Time
	id    uint32
	perms *wire.Permissions
}

func newUserPermits(client *iggy.Client, user string, clk clock.Clock) *userPermits {
	return &userPermits{client: client, user: user, clock: clk}
}

// errUserInactive refuses the calls of a deactivated user's connection until it is closed.
var errUserInactive = fmt.Errorf("gateway: the Iggy user is inactive: %w", wire.Unauthorized)

func (p *userPermits) get(ctx context.Context) (uint32, *wire.Permissions, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && p.clock.Now().Sub(p.at) < permitsFor {
		return p.id, p.perms, nil
	}
	d, err := p.client.GetUser(ctx, wire.NamedID(p.user))
	if err != nil {
		if errors.Is(err, wire.ResourceNotFound) {
			return 0, nil, fmt.Errorf("gateway: the Iggy user %s is gone: %w", p.user, wire.Unauthorized)
		}
		return 0, nil, err
	}
	if d.Status != wire.UserStatusActive {
		return 0, nil, errUserInactive
	}
	p.at, p.id, p.perms = p.clock.Now(), d.ID, d.Permissions
	return p.id, p.perms, nil
}

// authorizer answers the gateway's own authorization questions for one user (bridge.Authorizer)
// with Iggy's rule: the user's permissions against the ids of the gateway's stream and, for a
// topic, of the topic.
type authorizer struct {
	permits *userPermits
	stream  *streamView
}

func (a *authorizer) allowed(ctx context.Context, acl authz.ACL) (bool, error) {
	uid, p, err := a.permits.get(ctx)
	if err != nil {
		if errors.Is(err, wire.Unauthorized) {
			return false, nil
		}
		return false, err
	}
	s, err := a.stream.get(ctx)
	if err != nil {
		return false, err
	}
	topics := func(name string) (uint32, bool) {
		for _, t := range s.Topics {
			if t.Name == name {
				return t.ID, true
			}
		}
		return 0, false
	}
	return authz.Allowed(uid, p, authz.CheckOf(acl, s.ID, topics)), nil
}

// streamView is the gateway's stream with its topics' ids, read through the gateway's own
// login at most permitsFor old, for the authorization questions of every connection (a group's
// heartbeats ask one each).
type streamView struct {
	service *iggy.Client
	name    string
	clock   clock.Clock

	mu sync.Mutex
	at time.Time
	d  *wire.StreamDetails
}

func (v *streamView) get(ctx context.Context) (*wire.StreamDetails, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.d != nil && v.clock.Now().Sub(v.at) < permitsFor {
		return v.d, nil
	}
	d, err := v.service.GetStream(ctx, wire.NamedID(v.name))
	if err != nil {
		return nil, fmt.Errorf("gateway: reading stream %s: %w", v.name, err)
	}
	v.d, v.at = d, v.clock.Now()
	return d, nil
}
