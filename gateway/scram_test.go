package gateway

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	gscram "github.com/iggy-kafka/iggy-kafka/gateway/scram"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// Two SASL gateways over one store. Iggy users alice (may write) and bob (may only read) set
// their SCRAM passwords through AlterUserScramCredentials at gateway 1; franz-go's SCRAM client
// then authenticates at gateway 2 and acts there as that Iggy user, with its permissions. A
// wrong password is refused, a password altered at gateway 1 replaces the old one at gateway 2,
// and a user cannot set another's credential.
func TestSCRAMAcrossGateways(t *testing.T) {
	g1, g2, admin := saslPair(t)
	ctx := testCtx(t)
	writer := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, ManageTopics: true, PollMessages: true, SendMessages: true}}
	if _, err := admin.CreateUser(ctx, "alice", "wonderland", wire.UserStatusActive, writer); err != nil {
		t.Fatal(err)
	}
	reader := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true}}
	if _, err := admin.CreateUser(ctx, "bob", "builder", wire.UserStatusActive, reader); err != nil {
		t.Fatal(err)
	}

	// Only gateway 1 ever sees the PLAIN logins.
	aliceAdm := kadm.NewClient(client(t, g1, kgo.SASL(plain.Auth{User: "alice", Pass: "wonderland"}.AsMechanism())))
	bobAdm := kadm.NewClient(client(t, g1, kgo.SASL(plain.Auth{User: "bob", Pass: "builder"}.AsMechanism())))
	set := func(adm *kadm.Client, user string, m kadm.ScramMechanism, pass string) error {
		t.Helper()
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Password: pass}})
		if err != nil {
			// kadm turns an authorization failure of any user into the call's error.
			return err
		}
		return res[user].Err
	}
	if err := set(aliceAdm, "alice", kadm.ScramSha256, "first-256"); err != nil {
		t.Fatalf("alice sets her SCRAM-SHA-256 password: %v", err)
	}
	if err := set(aliceAdm, "alice", kadm.ScramSha512, "first-512"); err != nil {
		t.Fatalf("alice sets her SCRAM-SHA-512 password: %v", err)
	}
	if err := set(bobAdm, "bob", kadm.ScramSha256, "bobs-256"); err != nil {
		t.Fatalf("bob sets his password: %v", err)
	}
	if err := set(bobAdm, "alice", kadm.ScramSha256, "taken-over"); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob sets alice's password: %v", err)
	}

	at2 := func(mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
		return client(t, g2, append([]kgo.Opt{kgo.SASL(mech), kgo.RequestRetries(0)}, opts...)...)
	}
	alice256 := at2(scram.Auth{User: "alice", Pass: "first-256"}.AsSha256Mechanism())
	if r, err := kadm.NewClient(alice256).CreateTopic(ctx, 1, 1, nil, "scrammed"); err != nil || r.Err != nil {
		t.Fatalf("alice creates at gateway 2 with SCRAM-SHA-256: %v %v", err, r.Err)
	}
	if err := alice256.ProduceSync(ctx, &kgo.Record{Topic: "scrammed", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("alice produces at gateway 2: %v", err)
	}
	alice512 := at2(scram.Auth{User: "alice", Pass: "first-512"}.AsSha512Mechanism())
	if err := alice512.ProduceSync(ctx, &kgo.Record{Topic: "scrammed", Value: []byte("w")}).FirstErr(); err != nil {
		t.Fatalf("alice produces at gateway 2 with SCRAM-SHA-512: %v", err)
	}
	described, err := kadm.NewClient(alice512).DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := described["alice"]; len(described) != 1 || d.Err != nil || len(d.CredInfos) != 2 || d.CredInfos[0].Iterations != 4096 {
		t.Fatalf("alice describes at gateway 2: %+v", described)
	}

	// bob authenticates with SCRAM and acts as bob: Iggy refuses his write.
	bob := at2(scram.Auth{User: "bob", Pass: "bobs-256"}.AsSha256Mechanism(), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
	if err := bob.Ping(ctx); err != nil {
		t.Fatalf("bob authenticates at gateway 2: %v", err)
	}
	if err := bob.ProduceSync(ctx, &kgo.Record{Topic: "scrammed", Value: []byte("v")}).FirstErr(); err == nil {
		t.Fatal("bob wrote through SCRAM without SendMessages permission")
	}

	for name, mech := range map[string]sasl.Mechanism{
		"a wrong password":         scram.Auth{User: "alice", Pass: "wrong"}.AsSha256Mechanism(),
		"bob's refused takeover":   scram.Auth{User: "alice", Pass: "taken-over"}.AsSha256Mechanism(),
		"the Iggy password":        scram.Auth{User: "alice", Pass: "wonderland"}.AsSha256Mechanism(),
		"a user without a SCRAM":   scram.Auth{User: "iggy", Pass: "iggy"}.AsSha256Mechanism(),
		"a mechanism bob has none": scram.Auth{User: "bob", Pass: "bobs-256"}.AsSha512Mechanism(),
	} {
		if err := at2(mech).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%s at gateway 2: %v", name, err)
		}
	}

	// Altered at gateway 1, the new password is the one gateway 2 checks.
	if err := set(aliceAdm, "alice", kadm.ScramSha256, "second-256"); err != nil {
		t.Fatalf("alice changes her password: %v", err)
	}
	if err := at2(scram.Auth{User: "alice", Pass: "first-256"}.AsSha256Mechanism()).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("the old password at gateway 2: %v", err)
	}
	if err := at2(scram.Auth{User: "alice", Pass: "second-256"}.AsSha256Mechanism()).ProduceSync(ctx, &kgo.Record{Topic: "scrammed", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("the new password at gateway 2: %v", err)
	}

	// Deleted at gateway 1, gone at gateway 2.
	res, err := aliceAdm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha512}}, nil)
	if err != nil || res["alice"].Err != nil {
		t.Fatalf("alice deletes her SCRAM-SHA-512 credential: %v %+v", err, res)
	}
	if err := at2(scram.Auth{User: "alice", Pass: "first-512"}.AsSha512Mechanism()).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a deleted credential at gateway 2: %v", err)
	}

	// Deleting the Iggy user ends its SCRAM logins once the user watcher has seen it (its
	// cached login goes within a second).
	if err := admin.DeleteUser(ctx, wire.NamedID("bob")); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "a deleted Iggy user's SCRAM login refused", func() error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(g2.Addr().String()), kgo.RequestRetries(0),
			kgo.SASL(scram.Auth{User: "bob", Pass: "bobs-256"}.AsSha256Mechanism()))
		if err != nil {
			return err
		}
		defer cl.Close()
		if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			return fmt.Errorf("ping: %v", err)
		}
		return nil
	})
}

// A credential record written into the meta stream by someone who may write there, holding an
// Iggy token of their own under another user's name, does not let that name in: the token must
// be the user's. Records that do not decode are skipped.
func TestSCRAMRecordWithAnotherUsersToken(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.SASL = true })
	ctx := testCtx(t)
	addr := []string{g.StoreAddr().String()}
	admin, err := iggy.Dial(ctx, iggy.Config{Addrs: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true}}
	for _, u := range []string{"alice", "mallory"} {
		if _, err := admin.CreateUser(ctx, u, u+"-pw", wire.UserStatusActive, perms); err != nil {
			t.Fatal(err)
		}
	}
	mallory, err := iggy.Dial(ctx, iggy.Config{Addrs: addr, Username: "mallory", Password: "mallory-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer mallory.Close()
	token, err := mallory.CreateToken(ctx, "mine", -1)
	if err != nil {
		t.Fatal(err)
	}
	salt := []byte("forged-salt-0123")
	salted, err := gscram.SaltPassword(gscram.SHA256, "forged", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cred, clientKey := gscram.FromSaltedPassword(gscram.SHA256, salt, 4096, salted)
	sealed, err := gscram.Seal(clientKey, "alice", gscram.SHA256, token)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := gscram.Record{User: "alice", Mechanism: gscram.SHA256, Credential: cred, Token: sealed}.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, topic := wire.NamedID("kafka.meta"), wire.NamedID(gscram.Topic)
	if _, err := admin.SendMessages(ctx, meta, topic, 0, []iggy.Message{{Payload: []byte("not a record")}, {Payload: rec}}); err != nil {
		t.Fatal(err)
	}

	forged := client(t, g, kgo.RequestRetries(0), kgo.SASL(scram.Auth{User: "alice", Pass: "forged"}.AsSha256Mechanism()))
	if err := forged.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("alice with a record holding mallory's token: %v", err)
	}

	// mallory's own credential, set after the undecodable record, authenticates.
	adm := kadm.NewClient(client(t, g, kgo.SASL(plain.Auth{User: "mallory", Pass: "mallory-pw"}.AsMechanism())))
	if res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "mallory", Mechanism: kadm.ScramSha256, Password: "own"}}); err != nil || res["mallory"].Err != nil {
		t.Fatalf("mallory sets her password: %v %+v", err, res)
	}
	own := client(t, g, kgo.RequestRetries(0), kgo.SASL(scram.Auth{User: "mallory", Pass: "own"}.AsSha256Mechanism()))
	if err := own.Ping(ctx); err != nil {
		t.Fatalf("mallory's own credential: %v", err)
	}
}
