package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// SCRAM credentials and Iggy users. A SCRAM-authenticated Kafka connection acts in Iggy as the
// Iggy user of the same name, with that user's permissions, as a PLAIN connection does; but the
// gateway never sees a SCRAM password, so it cannot log in with one. When a connection
// authenticated as user U (with PLAIN, or SCRAM) sets U's credential, the gateway creates an
// Iggy personal access token as U, named scramTokenName(mechanism) (an earlier one of that name
// is deleted first), and keeps it in U's credential record sealed under the ClientKey (package
// scram). A later SCRAM authentication recovers ClientKey from the client's proof, opens the
// token and logs in with it (userClients.authenticateToken), checking that the token is U's.
//
// So deleting or deactivating U in Iggy, or deleting its token, ends U's SCRAM logins at once
// (the user watcher closes live connections within a second, as for PLAIN); changing U's Iggy
// password does not change its SCRAM password, which only AlterUserScramCredentials sets, and
// deleting the credential deletes its token.
//
// An administrator (an Iggy user with the manage-users permission) may set the credential of
// another Iggy user U, as Kafka's AlterUserScramCredentials allows; the gateway cannot create a
// token as U then. The record names the administrator A and holds a token of A, named
// provisionTokenName(U, mechanism). A SCRAM authentication with it logs in to Iggy with A's
// token, checks that the token is A's and that A still has manage-users, and the connection
// acts through the gateway's own Iggy login with U's permissions, read through A's login at
// most permitsFor old and checked by the gateway with Iggy's rule (package authz,
// bridge.AsChecked). So a record forged into the meta stream authenticates only with the token
// of someone who could change U anyway; deleting or deactivating U, or A losing manage-users,
// ends such logins. A connection of a provisioned credential holds no login of U, so it cannot
// set U's credential itself: U does that from a PLAIN connection, or A sets it again.
//
// The records are in "<stream>.meta"/scram.Topic, partition 0. Every lookup reads what was
// appended since the last read, so a credential altered at one gateway is the one the next
// authentication at any other gateway checks; a read costs one small poll when nothing changed.
type scramStore struct {
	admin *iggy.Client // the gateway's own client: reads and appends the records
	users *userClients
	log   *slog.Logger
	meta  wire.Identifier
	topic wire.Identifier

	// mu is held across a read of the records, so one read is under way at a time.
	mu    sync.Mutex
	next  uint64
	creds map[scram.Key]scram.Record
}

// scramPoll is how many records one poll reads.
const scramPoll = 1000

// scramTokenName is the Iggy personal access token a user's credential for m holds; Iggy names
// tokens per user, 3..30 characters.
func scramTokenName(m scram.Mechanism) string {
	return "kafka-" + strings.ToLower(m.String())
}

func newSCRAMStore(ctx context.Context, admin *iggy.Client, users *userClients, stream string, log *slog.Logger) (*scramStore, error) {
	meta := fleet.MetaStream(stream)
	s := &scramStore{admin: admin, users: users, log: log, meta: wire.NamedID(meta), topic: wire.NamedID(scram.Topic),
		creds: map[scram.Key]scram.Record{}}
	if _, err := admin.GetTopic(ctx, s.meta, s.topic); err != nil {
		if !errors.Is(err, wire.TopicIDNotFound) {
			return nil, fmt.Errorf("gateway: reading topic %s/%s: %w", meta, scram.Topic, err)
		}
		if _, err := admin.CreateTopic(ctx, s.meta, scram.Topic, 1, iggy.TopicOptions{}); err != nil && !errors.Is(err, wire.TopicNameAlreadyExists) {
			return nil, fmt.Errorf("gateway: creating topic %s/%s: %w", meta, scram.Topic, err)
		}
	}
	return s, nil
}

// refresh reads the records appended since the last read. The caller holds s.mu.
func (s *scramStore) refresh(ctx context.Context) error {
	for {
		p, err := s.admin.Poll(ctx, iggy.PollRequest{Stream: s.meta, Topic: s.topic,
			Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: s.next}, Count: scramPoll})
		if err != nil {
			return fmt.Errorf("gateway: reading SCRAM credentials: %w", err)
		}
		n := p.Count
		err = s.apply(p.Batches)
		p.Release()
		if err != nil {
			return err
		}
		if n < scramPoll {
			return nil
		}
	}
}

func (s *scramStore) apply(batches []byte) error {
	recs := message.Records(batches)
	for {
		rec, ok := recs.Next()
		if !ok {
			return recs.Err()
		}
		h, _ := message.ParseBatchHeader(rec)
		it := message.Frames(rec)
		for f, ok := it.Next(); ok; f, ok = it.Next() {
			off := h.BaseOffset + uint64(f.OffsetDelta)
			if off < s.next {
				continue
			}
			s.next = off + 1
			r, err := scram.DecodeRecord(f.Payload)
			if err != nil {
				s.log.Warn("skipping an undecodable SCRAM credential record", "offset", off, "err", err)
				continue
			}
			if r.Deleted {
				delete(s.creds, r.Key())
			} else {
				s.creds[r.Key()] = r
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
}

// record returns the newest record of key, read fresh.
func (s *scramStore) record(ctx context.Context, key scram.Key) (scram.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(ctx); err != nil {
		return scram.Record{}, false, err
	}
	r, ok := s.creds[key]
	return r, ok, nil
}

func (s *scramStore) Lookup(ctx context.Context, user string, m scram.Mechanism) (scram.Credential, bool, error) {
	r, ok, err := s.record(ctx, scram.Key{User: user, Mechanism: m})
	return r.Credential, ok, err
}

func (s *scramStore) Login(ctx context.Context, user string, cred scram.Credential, clientKey []byte) (kafka.Storage, error) {
	s.mu.Lock()
	r, ok := s.creds[scram.Key{User: user, Mechanism: cred.Mechanism}]
	s.mu.Unlock()
	if !ok || !bytes.Equal(r.Credential.StoredKey, cred.StoredKey) {
		return nil, errors.New("gateway: the SCRAM credential changed during the authentication")
	}
	token, err := scram.Open(clientKey, user, cred.Mechanism, r.Token)
	if err != nil {
		return nil, err
	}
	if r.Admin != "" {
		return s.users.authenticateProvisioned(ctx, user, r.Admin, cred.Mechanism.String(), token)
	}
	return s.users.authenticateToken(ctx, user, cred.Mechanism.String(), token)
}

func (s *scramStore) Credentials(ctx context.Context) (map[string][]scram.Credential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	out := make(map[string][]scram.Credential)
	for k, r := range s.creds {
		out[k.User] = append(out[k.User], r.Credential)
	}
	return out, nil
}

// provisionTokenName is the Iggy personal access token of an administrator that a credential
// it provisioned for user with m holds: one per (user, mechanism), within Iggy's 30 characters
// whatever the user's name.
func provisionTokenName(user string, m scram.Mechanism) string {
	h := sha256.Sum256([]byte(user))
	return fmt.Sprintf("kafka-%d-%x", m.Size()*8, h[:8])
}

// tokenOf is the Iggy user whose token r holds and the token's name.
func tokenOf(r scram.Record) (owner, name string) {
	if r.Admin != "" {
		return r.Admin, provisionTokenName(r.User, r.Mechanism)
	}
	return r.User, scramTokenName(r.Mechanism)
}

// clientOf is the Iggy client that acts as user, the SASL user of the connection asking.
func (s *scramStore) clientOf(user string) (*iggy.Client, error) {
	c := s.users.clientOf(user)
	if c == nil {
		// The user watcher dropped the user since its connection authenticated (Iggy no
		// longer accepts it, and its connections are being closed), or the connection
		// authenticated with a credential an administrator provisioned, which holds no login
		// of the user itself.
		return nil, fmt.Errorf("%w: the gateway holds no Iggy login of %s itself (a connection authenticated with PLAIN or with a SCRAM credential the user set can change it)",
			kerr.ClusterAuthorizationFailed, user)
	}
	return c, nil
}

// Manages reports whether the SASL user by has Iggy's manage-users permission (alter) or its
// read-users permission (describe), read now through the gateway's own login.
func (s *scramStore) Manages(ctx context.Context, by string, alter bool) (bool, error) {
	return managesOthers(ctx, s.admin, by, alter)
}

// errNotManager refuses a change of another user's credential by a user without Iggy's
// manage-users permission.
var errNotManager = fmt.Errorf("%w: altering the SCRAM credential of another user needs Iggy's manage-users permission", kerr.ClusterAuthorizationFailed)

func (s *scramStore) Set(ctx context.Context, by, user string, m scram.Mechanism, salt []byte, iterations int32, saltedPassword []byte) error {
	if by != user {
		return s.provision(ctx, by, user, m, salt, iterations, saltedPassword)
	}
	client, err := s.clientOf(user)
	if err != nil {
		return err
	}
	cred, clientKey := scram.FromSaltedPassword(m, salt, iterations, saltedPassword)
	name := scramTokenName(m)
	if err := client.DeleteToken(ctx, name); err != nil && !errors.Is(err, wire.ResourceNotFound) {
		return fmt.Errorf("gateway: deleting the Iggy token %s of %s: %w", name, user, err)
	}
	token, err := client.CreateToken(ctx, name, -1)
	if err != nil {
		return fmt.Errorf("gateway: creating the Iggy token %s of %s: %w", name, user, err)
	}
	sealed, err := scram.Seal(clientKey, user, m, token)
	if err != nil {
		return err
	}
	return s.append(ctx, scram.Record{User: user, Mechanism: m, Credential: cred, Token: sealed})
}

// provision sets user's credential at the request of by, an administrator: the record holds a
// token of by, and a login with the credential acts through by's Iggy login with user's
// permissions, which the gateway checks (bridge.AsChecked). The user must exist in Iggy.
func (s *scramStore) provision(ctx context.Context, by, user string, m scram.Mechanism, salt []byte, iterations int32, saltedPassword []byte) error {
	if ok, err := s.Manages(ctx, by, true); err != nil {
		return err
	} else if !ok {
		return errNotManager
	}
	client, err := s.clientOf(by)
	if err != nil {
		return err
	}
	if _, err := client.GetUser(ctx, wire.NamedID(user)); err != nil {
		if errors.Is(err, wire.ResourceNotFound) {
			return fmt.Errorf("%w: no Iggy user is named %q; create it in Iggy first", kerr.ResourceNotFound, user)
		}
		return fmt.Errorf("gateway: reading the Iggy user %s: %w", user, err)
	}
	cred, clientKey := scram.FromSaltedPassword(m, salt, iterations, saltedPassword)
	name := provisionTokenName(user, m)
	if err := client.DeleteToken(ctx, name); err != nil && !errors.Is(err, wire.ResourceNotFound) {
		return fmt.Errorf("gateway: deleting the Iggy token %s of %s: %w", name, by, err)
	}
	token, err := client.CreateToken(ctx, name, -1)
	if err != nil {
		return fmt.Errorf("gateway: creating the Iggy token %s of %s: %w", name, by, err)
	}
	sealed, err := scram.Seal(clientKey, user, m, token)
	if err != nil {
		return err
	}
	return s.append(ctx, scram.Record{User: user, Mechanism: m, Credential: cred, Token: sealed, Admin: by})
}

func (s *scramStore) Delete(ctx context.Context, by, user string, m scram.Mechanism) error {
	if by != user {
		if ok, err := s.Manages(ctx, by, true); err != nil {
			return err
		} else if !ok {
			return errNotManager
		}
	}
	r, ok, err := s.record(ctx, scram.Key{User: user, Mechanism: m})
	if err != nil {
		return err
	} else if !ok {
		return kerr.ResourceNotFound
	}
	if err := s.append(ctx, scram.Record{User: user, Mechanism: m, Deleted: true}); err != nil {
		return err
	}
	// The token goes too when the gateway holds a login of its owner; otherwise it stays in
	// Iggy, where nothing can use it without the password the credential was made from.
	owner, name := tokenOf(r)
	client := s.users.clientOf(owner)
	if client == nil {
		s.log.Info("the Iggy token of a deleted SCRAM credential stays: no login of its owner at hand", "user", user, "owner", owner, "token", name)
		return nil
	}
	if err := client.DeleteToken(ctx, name); err != nil && !errors.Is(err, wire.ResourceNotFound) {
		return fmt.Errorf("gateway: deleting the Iggy token %s of %s: %w", name, owner, err)
	}
	return nil
}

// append appends one record and reads it back with what came before it.
func (s *scramStore) append(ctx context.Context, r scram.Record) error {
	b, err := r.Append(nil)
	if err != nil {
		return err
	}
	if _, err := s.admin.SendMessages(ctx, s.meta, s.topic, 0, []iggy.Message{{Payload: b}}); err != nil {
		return fmt.Errorf("gateway: storing the SCRAM credential of %s: %w", r.User, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refresh(ctx)
}
