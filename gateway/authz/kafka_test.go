package authz

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

const testStream = 3

var testTopics = map[string]uint32{"orders": 7, "audit": 9}

func topicID(name string) (uint32, bool) { id, ok := testTopics[name]; return id, ok }

func topicName(id uint32) (string, bool) {
	for n, i := range testTopics {
		if i == id {
			return n, true
		}
	}
	return "", false
}

// Every ACL the table expresses, granted alone to a user without permissions, is then allowed
// by its check, listed by the view, and cleared again leaves the user with nothing.
func TestGrantCheckViewRoundTrip(t *testing.T) {
	var acls []ACL
	for res, ops := range viewOps {
		names := []string{Wildcard}
		switch res {
		case kmsg.ACLResourceTypeTopic:
			names = append(names, "orders")
		case kmsg.ACLResourceTypeCluster:
			names = []string{ClusterName}
		}
		for _, n := range names {
			for _, op := range ops {
				acls = append(acls, ACL{Resource: res, Name: n, Op: op})
			}
		}
	}
	for _, acl := range acls {
		g, err := GrantOf(acl)
		if acl.Resource == kmsg.ACLResourceTypeTopic && acl.Name != Wildcard && acl.Op == kmsg.ACLOperationCreate {
			if !errors.Is(err, ErrInexpressible) {
				t.Errorf("%v: %v, want inexpressible", acl, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", acl, err)
			continue
		}
		p := Apply(&wire.Permissions{}, g, testStream, testTopics["orders"], true)
		if !Allowed(5, p, CheckOf(acl, testStream, topicID)) {
			t.Errorf("%v: granted %v, not allowed", acl, g)
		}
		if got := ACLsOf(5, p, testStream, topicName); !slices.Contains(got, acl) {
			t.Errorf("%v: granted %v, the view lists %v", acl, g, got)
		}
		if got := ACLsOf(5, Apply(p, g, testStream, testTopics["orders"], false), testStream, topicName); len(got) != 0 {
			t.Errorf("%v: cleared %v, the view lists %v", acl, g, got)
		}
	}
}

func TestTopicGrantIsThatTopicsOnly(t *testing.T) {
	g, err := GrantOf(ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "orders", Op: kmsg.ACLOperationWrite})
	if err != nil {
		t.Fatal(err)
	}
	p := Apply(nil, g, testStream, testTopics["orders"], true)
	for _, c := range []struct {
		acl  ACL
		want bool
	}{
		{ACL{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationWrite}, true},
		{ACL{kmsg.ACLResourceTypeTopic, "audit", kmsg.ACLOperationWrite}, false},
		{ACL{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationRead}, false},
		{ACL{kmsg.ACLResourceTypeTopic, Wildcard, kmsg.ACLOperationWrite}, false},
		// A producer with a grant on its topic may be idempotent, as Kafka allows WRITE on any topic.
		{ACL{kmsg.ACLResourceTypeCluster, ClusterName, kmsg.ACLOperationIdempotentWrite}, true},
		{ACL{kmsg.ACLResourceTypeGroup, Wildcard, kmsg.ACLOperationRead}, false},
		{ACL{kmsg.ACLResourceTypeCluster, ClusterName, kmsg.ACLOperationAlter}, false},
	} {
		if got := Allowed(5, p, CheckOf(c.acl, testStream, topicID)); got != c.want {
			t.Errorf("%v: %v, want %v", c.acl, got, c.want)
		}
	}
	want := []ACL{{kmsg.ACLResourceTypeCluster, ClusterName, kmsg.ACLOperationIdempotentWrite},
		{kmsg.ACLResourceTypeTransactionalId, Wildcard, kmsg.ACLOperationWrite},
		{kmsg.ACLResourceTypeTransactionalId, Wildcard, kmsg.ACLOperationDescribe},
		{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationWrite}}
	if got := ACLsOf(5, p, testStream, topicName); !slices.Equal(got, want) {
		t.Errorf("view %v, want %v", got, want)
	}
	// Root has every wildcard ACL and no literal one.
	if got := ACLsOf(RootID, nil, testStream, topicName); len(got) != 19 {
		t.Errorf("root's view: %d ACLs %v", len(got), got)
	}
}

func TestInexpressible(t *testing.T) {
	for name, err := range map[string]error{
		"deny":          CheckPattern(kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeDeny, "*"),
		"a host":        CheckPattern(kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow, "10.0.0.1"),
		"prefixed":      CheckPattern(kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLPermissionTypeAllow, "*"),
		"match pattern": CheckPattern(kmsg.ACLResourcePatternTypeMatch, kmsg.ACLPermissionTypeAllow, "*"),
	} {
		if !errors.Is(err, ErrInexpressible) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckPattern(kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow, "*"); err != nil {
		t.Errorf("a literal allow from every host: %v", err)
	}
	for _, acl := range []ACL{
		{kmsg.ACLResourceTypeGroup, "payments", kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeTransactionalId, "tx-1", kmsg.ACLOperationWrite},
		{kmsg.ACLResourceTypeCluster, ClusterName, kmsg.ACLOperationClusterAction},
		{kmsg.ACLResourceTypeCluster, "other", kmsg.ACLOperationAlter},
		{kmsg.ACLResourceTypeDelegationToken, Wildcard, kmsg.ACLOperationDescribe},
		{kmsg.ACLResourceTypeTopic, "", kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeGroup, Wildcard, kmsg.ACLOperationWrite},
	} {
		if _, err := GrantOf(acl); !errors.Is(err, ErrInexpressible) {
			t.Errorf("%v: %v, want inexpressible", acl, err)
		}
	}
}

// READ granted on a topic (with the DESCRIBE Kafka implies) and revoked leaves nothing: Iggy's
// read-topic includes polling, so both go. WRITE revoked leaves the DESCRIBE (and the polling it
// includes) that its grant added.
func TestGrantsAndRevokes(t *testing.T) {
	read := ACL{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationRead}
	write := ACL{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationWrite}
	apply := func(p *wire.Permissions, acl ACL, set bool) *wire.Permissions {
		gs, err := GrantsFor(acl)
		if !set {
			gs, err = RevokesFor(acl)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			p = Apply(p, g, testStream, testTopics["orders"], set)
		}
		return p
	}
	p := apply(&wire.Permissions{}, read, true)
	if got := ACLsOf(5, apply(p, read, false), testStream, topicName); len(got) != 0 {
		t.Errorf("READ granted and revoked: %v", got)
	}
	p = apply(apply(&wire.Permissions{}, write, true), write, false)
	want := []ACL{{kmsg.ACLResourceTypeGroup, Wildcard, kmsg.ACLOperationRead}, {kmsg.ACLResourceTypeGroup, Wildcard, kmsg.ACLOperationDescribe},
		{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationRead}, {kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationDescribe},
		{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLOperationDescribeConfigs}}
	if got := ACLsOf(5, p, testStream, topicName); !slices.Equal(got, want) {
		t.Errorf("WRITE granted and revoked:\n got %v\nwant %v", got, want)
	}
}
