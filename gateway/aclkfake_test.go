package gateway

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// The same ACL creations to the gateway and to kfake (with ACLs enabled), each as its
// superuser: kfake stores every one; the gateway takes those an Iggy permission stands for and
// refuses the others with INVALID_REQUEST. Both then refuse carol's write without a grant and
// allow it with one.
func TestACLsBesideKfake(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "iggy", "iggy"), kfake.User("PLAIN", "carol", "carol-password"))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	g := startGateway(t, func(c *Config) { c.SASL = true })
	ctx := testCtx(t)
	admin, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{g.StoreAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.CreateUser(ctx, "carol", "carol-password", wire.UserStatusActive, &wire.Permissions{}); err != nil {
		t.Fatal(err)
	}
	sasl := func(user string) kgo.Opt {
		return kgo.SASL(plain.Auth{User: user, Pass: map[string]string{"iggy": "iggy", "carol": "carol-password"}[user]}.AsMechanism())
	}
	gwRoot := client(t, g, sasl("iggy"))
	if r, err := kadm.NewClient(gwRoot).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("creating orders: %v %v", err, r.Err)
	}
	fakeClient := func(user string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...), sasl(user), kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	fakeRoot := fakeClient("iggy")

	const c = "User:carol"
	deny := creation(c, kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationWrite)
	deny.PermissionType = kmsg.ACLPermissionTypeDeny
	prefixed := creation(c, kmsg.ACLResourceTypeTopic, "ord", kmsg.ACLOperationRead)
	prefixed.ResourcePatternType = kmsg.ACLResourcePatternTypePrefixed
	host := creation(c, kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationRead)
	host.Host = "10.0.0.1"
	for _, cs := range []struct {
		name      string
		cr        kmsg.CreateACLsRequestCreation
		gwRefuses bool
	}{
		{"a deny rule", deny, true},
		{"a prefixed pattern", prefixed, true},
		{"a host", host, true},
		{"one group", creation(c, kmsg.ACLResourceTypeGroup, "payments", kmsg.ACLOperationRead), true},
		{"a user nobody knows", creation("User:nobody", kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationRead), true},
		{"WRITE on a topic", creation(c, kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationWrite), false},
	} {
		fakeErrs, _ := createACLs(t, fakeRoot, cs.cr)
		if fakeErrs[0] != nil {
			t.Errorf("%s: kfake answered %v, want it stored", cs.name, fakeErrs[0])
		}
		gwErrs, msgs := createACLs(t, gwRoot, cs.cr)
		switch {
		case cs.gwRefuses && !errors.Is(gwErrs[0], kerr.InvalidRequest):
			t.Errorf("%s: the gateway answered %v, want INVALID_REQUEST", cs.name, gwErrs[0])
		case !cs.gwRefuses && gwErrs[0] != nil:
			t.Errorf("%s: the gateway answered %v %s", cs.name, gwErrs[0], msgs[0])
		}
		if cs.name == "a deny rule" {
			// Before the grant: carol's write is refused by both.
			for name, cl := range map[string]*kgo.Client{"kfake": fakeClient("carol"),
				"the gateway": client(t, g, sasl("carol"), kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())} {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
					t.Errorf("%s: carol's write without a grant: %v", name, err)
				}
			}
		}
	}
	// With the grant the gateway allows carol's write; kfake's stored deny rule wins over its
	// allow, the gateway stored none.
	gwCarol := client(t, g, sasl("carol"), kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
	if err := gwCarol.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Errorf("the gateway: carol's write with WRITE granted: %v", err)
	}
	if err := fakeClient("carol").ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("kfake: carol's write with WRITE allowed and denied: %v", err)
	}
}
