package gateway

import (
	"bytes"
	"context"
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

// clientOf is the Iggy client that acts as user, the SASL user of the connection asking.
func (s *scramStore) clientOf(user string) (*iggy.Client, error) {
	c := s.users.clientOf(user)
	if c == nil {
		// The user watcher dropped the user since its connection authenticated: Iggy no
		// longer accepts it, and its connections are being closed.
		return nil, kerr.ClusterAuthorizationFailed
	}
	return c, nil
}

func (s *scramStore) Set(ctx context.Context, user string, m scram.Mechanism, salt []byte, iterations int32, saltedPassword []byte) error {
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

func (s *scramStore) Delete(ctx context.Context, user string, m scram.Mechanism) error {
	client, err := s.clientOf(user)
	if err != nil {
		return err
	}
	if _, ok, err := s.record(ctx, scram.Key{User: user, Mechanism: m}); err != nil {
		return err
	} else if !ok {
		return kerr.ResourceNotFound
	}
	if err := s.append(ctx, scram.Record{User: user, Mechanism: m, Deleted: true}); err != nil {
		return err
	}
	if err := client.DeleteToken(ctx, scramTokenName(m)); err != nil && !errors.Is(err, wire.ResourceNotFound) {
		return fmt.Errorf("gateway: deleting the Iggy token %s of %s: %w", scramTokenName(m), user, err)
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
