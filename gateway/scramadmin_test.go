package gateway

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	gscram "github.com/iggy-kafka/iggy-kafka/gateway/scram"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// An administrator (an Iggy user with manage-users, here ops) provisions the SCRAM credential of
// carol, whose Iggy permissions allow sending to and reading topic "mine" only, at gateway 1;
// carol then authenticates with it at gateway 2 and has exactly her Iggy permissions there:
// "mine" is hers, "theirs" is TOPIC_AUTHORIZATION_FAILED until Iggy grants it. A user without
// manage-users (bob) cannot provision, a user unknown to Iggy cannot be provisioned, the
// administrator sees every user's credentials and deletes carol's.
func TestSCRAMProvisionedByAdministrator(t *testing.T) {
	g1, g2, admin := saslPair(t)
	ctx := testCtx(t)

	root := kadm.NewClient(client(t, g1, kgo.SASL(plain.Auth{User: "iggy", Pass: "iggy"}.AsMechanism())))
	for _, topic := range []string{"mine", "theirs"} {
		if r, err := root.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
			t.Fatalf("creating %s: %v %v", topic, err, r.Err)
		}
	}
	stream, err := admin.GetStream(ctx, wire.NamedID("kafka"))
	if err != nil {
		t.Fatal(err)
	}
	topicID := func(name string) uint32 {
		tp, err := admin.GetTopic(ctx, wire.NamedID("kafka"), wire.NamedID(name))
		if err != nil {
			t.Fatal(err)
		}
		return tp.ID
	}
	on := func(topics ...string) *wire.Permissions {
		sp := wire.StreamPermissions{StreamID: stream.ID}
		for _, tp := range topics {
			sp.Topics = append(sp.Topics, wire.TopicPermissions{TopicID: topicID(tp), ReadTopic: true, SendMessages: true})
		}
		return &wire.Permissions{Streams: []wire.StreamPermissions{sp}}
	}
	users := map[string]*wire.Permissions{
		"ops":   {Global: wire.GlobalPermissions{ManageUsers: true}},
		"bob":   {Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true}},
		"carol": on("mine"),
	}
	for name, p := range users {
		if _, err := admin.CreateUser(ctx, name, name+"-password", wire.UserStatusActive, p); err != nil {
			t.Fatal(err)
		}
	}

	ops := kadm.NewClient(client(t, g1, kgo.SASL(plain.Auth{User: "ops", Pass: "ops-password"}.AsMechanism())))
	bob := kadm.NewClient(client(t, g1, kgo.SASL(plain.Auth{User: "bob", Pass: "bob-password"}.AsMechanism())))
	set := func(adm *kadm.Client, user, pass string) error {
		t.Helper()
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha256, Password: pass}})
		if err != nil {
			return err
		}
		return res[user].Err
	}
	if err := set(bob, "carol", "bobs-choice"); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob, without manage-users, provisions carol: %v", err)
	}
	if err := set(ops, "nobody", "pw"); !errors.Is(err, kerr.ResourceNotFound) {
		t.Fatalf("ops provisions a user Iggy does not know: %v", err)
	}
	if err := set(ops, "carol", "carols-scram"); err != nil {
		t.Fatalf("ops provisions carol: %v", err)
	}
	if err := set(bob, "bob", "bobs-own"); err != nil {
		t.Fatalf("bob sets his own: %v", err)
	}
	if d, err := ops.DescribeUserSCRAMs(ctx); err != nil || len(d) != 2 || d["carol"].Err != nil || d["bob"].Err != nil {
		t.Fatalf("ops describes every user: %+v %v", d, err)
	}
	if d, err := bob.DescribeUserSCRAMs(ctx); err != nil || len(d) != 1 || d["bob"].Err != nil {
		t.Fatalf("bob, without read-users, describes every user: %+v %v", d, err)
	}

	carol := client(t, g2, kgo.SASL(scram.Auth{User: "carol", Pass: "carols-scram"}.AsSha256Mechanism()),
		kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
	if err := carol.ProduceSync(ctx, &kgo.Record{Topic: "mine", Value: []byte("hers")}).FirstErr(); err != nil {
		t.Fatalf("carol produces to her topic at gateway 2: %v", err)
	}
	if err := carol.ProduceSync(ctx, &kgo.Record{Topic: "theirs", Value: []byte("not hers")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("carol produces to a topic Iggy does not let her: %v", err)
	}
	if err := set(kadm.NewClient(carol), "carol", "changed"); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol changes a credential held by ops's login: %v", err)
	}
	// Iggy grants her "theirs": the gateway applies it within a watcher round.
	if err := admin.UpdatePermissions(ctx, wire.NamedID("carol"), on("mine", "theirs")); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "carol's new permission applied", func() error {
		return carol.ProduceSync(ctx, &kgo.Record{Topic: "theirs", Value: []byte("now hers")}).FirstErr()
	})
	fetched := 0
	fc := client(t, g2, kgo.SASL(scram.Auth{User: "carol", Pass: "carols-scram"}.AsSha256Mechanism()),
		kgo.ConsumeTopics("mine"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for fetched == 0 {
		fs := fc.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("carol fetches her topic: %v", err)
		}
		fetched += fs.NumRecords()
	}

	// Deleted by ops, carol's credential no longer authenticates anywhere.
	res, err := ops.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || res["carol"].Err != nil {
		t.Fatalf("ops deletes carol's credential: %v %+v", err, res)
	}
	fresh := client(t, g2, kgo.RequestRetries(0), kgo.SASL(scram.Auth{User: "carol", Pass: "carols-scram"}.AsSha256Mechanism()))
	if err := fresh.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a deleted provisioned credential: %v", err)
	}
}

// A provisioned record written into the meta stream by a user without manage-users, holding
// her own token, does not authenticate: the administrator it names must manage users.
func TestSCRAMProvisionedRecordOfANonAdministrator(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.SASL = true })
	ctx := testCtx(t)
	addr := []string{g.StoreAddr().String()}
	admin, err := iggy.Dial(ctx, iggy.Config{Addrs: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadUsers: true, ReadStreams: true, PollMessages: true}}
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
	forge := func(user, admin string) []byte {
		salt := []byte("forged-salt-0123")
		salted, err := gscram.SaltPassword(gscram.SHA256, "forged", salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		cred, clientKey := gscram.FromSaltedPassword(gscram.SHA256, salt, 4096, salted)
		sealed, err := gscram.Seal(clientKey, user, gscram.SHA256, token)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := gscram.Record{User: user, Mechanism: gscram.SHA256, Credential: cred, Token: sealed, Admin: admin}.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	meta, topic := wire.NamedID("kafka.meta"), wire.NamedID(gscram.Topic)
	for _, forged := range []struct{ user, admin string }{{"alice", "mallory"}, {"alice", "iggy"}} {
		if _, err := admin.SendMessages(ctx, meta, topic, 0, []iggy.Message{{Payload: forge(forged.user, forged.admin)}}); err != nil {
			t.Fatal(err)
		}
		cl := client(t, g, kgo.RequestRetries(0), kgo.SASL(scram.Auth{User: forged.user, Pass: "forged"}.AsSha256Mechanism()))
		if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%s with a record naming %s and holding mallory's token: %v", forged.user, forged.admin, fmt.Sprint(err))
		}
	}
}
