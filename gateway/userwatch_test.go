package gateway

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// disconnects counts the broker connections a franz-go client saw closed.
type disconnects struct{ n atomic.Int32 }

func (d *disconnects) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) { d.n.Add(1) }

func saslClient(t *testing.T, g *Gateway, user, pass string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return client(t, g, append([]kgo.Opt{
		kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(0), kgo.RequestRetries(0),
	}, opts...)...)
}

func storeAdmin(t *testing.T, g *Gateway) *iggy.Client {
	t.Helper()
	admin, err := iggy.Dial(testCtx(t), iggy.Config{Addrs: []string{g.StoreAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

func produce(t *testing.T, cl *kgo.Client, topic string) error {
	return cl.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// A SASL user that Iggy stops accepting loses its Kafka connections within a second, whatever
// took it away, while another user's connection goes on working.
func TestIggyUserGoneClosesItsConnections(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.SASL = true })
	admin := storeAdmin(t, g)
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, ManageTopics: true, PollMessages: true, SendMessages: true}}
	if _, err := admin.CreateUser(testCtx(t), "bob", "builder", wire.UserStatusActive, perms); err != nil {
		t.Fatal(err)
	}
	var bobGone disconnects
	bob := saslClient(t, g, "bob", "builder", kgo.WithHooks(&bobGone))
	if r, err := kadm.NewClient(bob).CreateTopic(testCtx(t), 1, 1, nil, "shared"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}

	for _, tc := range []struct {
		name, user string
		remove     func(user string) error
	}{
		{"deleted", "alice", func(user string) error { return admin.DeleteUser(testCtx(t), wire.NamedID(user)) }},
		{"deactivated", "carol", func(user string) error {
			inactive := wire.UserStatusInactive
			return admin.UpdateUser(testCtx(t), wire.NamedID(user), nil, &inactive)
		}},
		{"password changed", "dave", func(user string) error {
			return admin.ChangePassword(testCtx(t), wire.NamedID(user), "secret", "changed")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := admin.CreateUser(testCtx(t), tc.user, "secret", wire.UserStatusActive, perms); err != nil {
				t.Fatal(err)
			}
			var gone disconnects
			cl := saslClient(t, g, tc.user, "secret", kgo.WithHooks(&gone))
			if err := produce(t, cl, "shared"); err != nil {
				t.Fatalf("%s produces: %v", tc.user, err)
			}
			if err := tc.remove(tc.user); err != nil {
				t.Fatal(err)
			}
			removed := time.Now()
			// franz-go notices a closed connection when it next uses it, so every check
			// sends a request; without the close it is answered on the old connection.
			checkfor.Eventually(t, time.Second, tc.user+"'s connection is closed", func() error {
				err := cl.Ping(testCtx(t))
				return checkfor.True(gone.n.Load() > 0, "no disconnect after %v; ping: %v", time.Since(removed), err)
			})
			t.Logf("%s's connection closed within %v", tc.user, time.Since(removed))
			if err := saslClient(t, g, tc.user, "secret").Ping(testCtx(t)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("%s authenticates again with the old password: %v", tc.user, err)
			}
			if tc.name == "password changed" {
				if err := produce(t, saslClient(t, g, tc.user, "changed"), "shared"); err != nil {
					t.Fatalf("%s with the new password: %v", tc.user, err)
				}
			}
			if err := produce(t, bob, "shared"); err != nil || bobGone.n.Load() != 0 {
				t.Fatalf("bob after %s: %v, %d disconnects", tc.name, err, bobGone.n.Load())
			}
		})
	}
}

// A revoked permission refuses the next request within a second and a granted one allows it, on
// the connection that was already open.
func TestIggyPermissionChangesApplyToOpenConnections(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.SASL = true })
	admin := storeAdmin(t, g)
	root := saslClient(t, g, "iggy", "iggy")
	if r, err := kadm.NewClient(root).CreateTopic(testCtx(t), 1, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	stream, err := admin.GetStream(testCtx(t), wire.NamedID("kafka"))
	if err != nil {
		t.Fatal(err)
	}
	perms := func(send bool) *wire.Permissions {
		return &wire.Permissions{
			Global:  wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true},
			Streams: []wire.StreamPermissions{{StreamID: stream.ID, ReadStream: true, SendMessages: send}},
		}
	}
	if _, err := admin.CreateUser(testCtx(t), "alice", "secret", wire.UserStatusActive, perms(true)); err != nil {
		t.Fatal(err)
	}
	var gone disconnects
	alice := saslClient(t, g, "alice", "secret", kgo.WithHooks(&gone))
	if err := produce(t, alice, "events"); err != nil {
		t.Fatalf("alice produces: %v", err)
	}

	for _, step := range []struct {
		send bool
		want error
	}{{false, kerr.TopicAuthorizationFailed}, {true, nil}, {false, kerr.TopicAuthorizationFailed}} {
		if err := admin.UpdatePermissions(testCtx(t), wire.NamedID("alice"), perms(step.send)); err != nil {
			t.Fatal(err)
		}
		checkfor.Eventually(t, time.Second, fmt.Sprintf("produce with send=%v", step.send), func() error {
			if err := produce(t, alice, "events"); !errors.Is(err, step.want) && err != step.want {
				return fmt.Errorf("produce: %v, want %v", err, step.want)
			}
			return nil
		})
	}
	if n := gone.n.Load(); n != 0 {
		t.Fatalf("a permission change closed %d of alice's connections", n)
	}
}
