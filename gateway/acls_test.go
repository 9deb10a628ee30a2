package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// aclRow is one ACL as DescribeAcls lists it, for comparisons.
type aclRow struct {
	principal string
	res       kmsg.ACLResourceType
	name      string
	op        kmsg.ACLOperation
}

func (r aclRow) String() string { return fmt.Sprintf("%s %s:%s %s", r.principal, r.res, r.name, r.op) }

func describeACLs(t *testing.T, cl *kgo.Client, principal *string) ([]aclRow, error) {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	req.Principal = principal
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	var rows []aclRow
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			if a.Host != "*" || a.PermissionType != kmsg.ACLPermissionTypeAllow || r.ResourcePatternType != kmsg.ACLResourcePatternTypeLiteral {
				t.Fatalf("an ACL not a literal allow from every host: %+v in %+v", a, r)
			}
			rows = append(rows, aclRow{a.Principal, r.ResourceType, r.ResourceName, a.Operation})
		}
	}
	return rows, nil
}

// creation is one CreateAcls creation: a literal allow from every host unless changed.
func creation(principal string, res kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.Principal, c.Host, c.ResourceType, c.ResourceName, c.Operation = principal, "*", res, name, op
	c.ResourcePatternType, c.PermissionType = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow
	return c
}

// createACLs returns one error per creation (nil: created) and the messages.
func createACLs(t *testing.T, cl *kgo.Client, cs ...kmsg.CreateACLsRequestCreation) ([]error, []string) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = cs
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != len(cs) {
		t.Fatalf("%d results for %d creations", len(resp.Results), len(cs))
	}
	var errs []error
	var msgs []string
	for _, r := range resp.Results {
		errs = append(errs, kerr.ErrorForCode(r.ErrorCode))
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		msgs = append(msgs, msg)
	}
	return errs, msgs
}

// deleteACLs deletes with one filter and returns its matches' errors and the filter's error.
func deleteACLs(t *testing.T, cl *kgo.Client, principal string, res kmsg.ACLResourceType, name string, op kmsg.ACLOperation) ([]error, error) {
	t.Helper()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.Principal, f.ResourceType, f.ResourceName, f.Operation = &principal, res, &name, op
	f.ResourcePatternType, f.PermissionType = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Filters = append(req.Filters, f)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	var ms []error
	for _, m := range r.MatchingACLs {
		ms = append(ms, kerr.ErrorForCode(m.ErrorCode))
	}
	return ms, kerr.ErrorForCode(r.ErrorCode)
}

// Two SASL gateways over one store. The administrator ops (Iggy's manage-users) grants carol
// ACLs at gateway 1; gateway 2 lists exactly them, and carol's requests there are allowed and
// refused by them; what Iggy cannot express is refused with a message and changes nothing;
// users without manage-users (or read-users) may not change (read) ACLs; deletions clear the
// permission, except where another of carol's permissions still allows the ACL.
func TestACLsAsIggyPermissions(t *testing.T) {
	g1, g2, admin := saslPair(t)
	ctx := testCtx(t)
	for name, p := range map[string]*wire.Permissions{
		"ops":   {Global: wire.GlobalPermissions{ManageUsers: true}},
		"dave":  {Global: wire.GlobalPermissions{ReadUsers: true}},
		"carol": {},
	} {
		if _, err := admin.CreateUser(ctx, name, name+"-password", wire.UserStatusActive, p); err != nil {
			t.Fatal(err)
		}
	}
	as := func(g *Gateway, user string, opts ...kgo.Opt) *kgo.Client {
		return client(t, g, append([]kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: user + "-password"}.AsMechanism()),
			kgo.RequestRetries(0), kgo.RecordRetries(1), kgo.DisableIdempotentWrite()}, opts...)...)
	}
	root := client(t, g1, kgo.SASL(plain.Auth{User: "iggy", Pass: "iggy"}.AsMechanism()))
	for _, topic := range []string{"orders", "audit"} {
		if r, err := kadm.NewClient(root).CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
			t.Fatalf("creating %s: %v %v", topic, err, r.Err)
		}
	}
	ops, dave, carol1, carol2 := as(g1, "ops"), as(g2, "dave"), as(g1, "carol"), as(g2, "carol")
	const c = "User:carol"
	topic, group, cluster := kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeCluster

	// Nobody but an administrator changes ACLs; read-users reads them.
	if errs, _ := createACLs(t, carol1, creation(c, topic, "orders", kmsg.ACLOperationWrite)); !errors.Is(errs[0], kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol grants herself: %v", errs[0])
	}
	if errs, _ := createACLs(t, dave, creation(c, topic, "orders", kmsg.ACLOperationWrite)); !errors.Is(errs[0], kerr.ClusterAuthorizationFailed) {
		t.Fatalf("dave (read-users) grants: %v", errs[0])
	}
	if _, err := describeACLs(t, carol2, nil); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol describes ACLs: %v", err)
	}
	if rows, err := describeACLs(t, dave, kmsg.StringPtr(c)); err != nil || len(rows) != 0 {
		t.Fatalf("dave describes carol's ACLs before any: %v %v", rows, err)
	}

	// What Iggy cannot express, one clear error each; nothing changes.
	deny := creation(c, topic, "orders", kmsg.ACLOperationRead)
	deny.PermissionType = kmsg.ACLPermissionTypeDeny
	host := creation(c, topic, "orders", kmsg.ACLOperationRead)
	host.Host = "10.0.0.1"
	prefixed := creation(c, topic, "ord", kmsg.ACLOperationRead)
	prefixed.ResourcePatternType = kmsg.ACLResourcePatternTypePrefixed
	bad := map[string]kmsg.CreateACLsRequestCreation{
		"deny rules":           deny,
		"hosts":                host,
		"prefixed patterns":    prefixed,
		"one group":            creation(c, group, "payments", kmsg.ACLOperationRead),
		"no Iggy user":         creation("User:nobody", topic, "orders", kmsg.ACLOperationRead),
		"belong to users":      creation("Group:ops", topic, "orders", kmsg.ACLOperationRead),
		"does not exist":       creation(c, topic, "missing", kmsg.ACLOperationRead),
		"CREATE on one topic":  creation(c, topic, "orders", kmsg.ACLOperationCreate),
		"root user":            creation("User:iggy", topic, "orders", kmsg.ACLOperationRead),
		"cluster named":        creation(c, cluster, "other", kmsg.ACLOperationAlter),
		"no permission stands": creation(c, cluster, "kafka-cluster", kmsg.ACLOperationClusterAction),
	}
	var names []string
	var cs []kmsg.CreateACLsRequestCreation
	for name, cr := range bad {
		names = append(names, name)
		cs = append(cs, cr)
	}
	errs, msgs := createACLs(t, ops, cs...)
	for i, name := range names {
		if !errors.Is(errs[i], kerr.InvalidRequest) || !strings.Contains(msgs[i], name) {
			t.Errorf("%s: %v %q", name, errs[i], msgs[i])
		}
	}
	if rows, err := describeACLs(t, dave, kmsg.StringPtr(c)); err != nil || len(rows) != 0 {
		t.Fatalf("carol's ACLs after the refused creations: %v %v", rows, err)
	}

	// Groups: nobody has group * yet, so finding a group's coordinator is refused.
	// findGroupAt asks gateway node for a group's coordinator: the check runs there.
	findGroupAt := func(cl *kgo.Client, node int32) error {
		t.Helper()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = "carols-group", []string{"carols-group"}
		kresp, err := cl.Broker(int(node)).Request(ctx, req)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.FindCoordinatorResponse)
		if len(resp.Coordinators) != 1 {
			return fmt.Errorf("%d coordinators in the answer (v%d)", len(resp.Coordinators), resp.Version)
		}
		return kerr.ErrorForCode(resp.Coordinators[0].ErrorCode)
	}
	findGroup := func(cl *kgo.Client) error { return findGroupAt(cl, 2) }
	if err := findGroup(carol2); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("carol finds a group's coordinator before group * READ: %v", err)
	}

	// Granted at gateway 1, listed and enforced at gateway 2.
	errs, msgs = createACLs(t, ops,
		creation(c, topic, "orders", kmsg.ACLOperationWrite),
		creation(c, topic, "orders", kmsg.ACLOperationRead),
		creation(c, topic, "audit", kmsg.ACLOperationAll),
		creation(c, group, "*", kmsg.ACLOperationRead))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation %d: %v %s", i, err, msgs[i])
		}
	}
	rows, err := describeACLs(t, dave, kmsg.StringPtr(c))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.String())
	}
	want := []string{
		// Iggy's send-messages on a topic is also what Kafka's idempotent and transactional
		// producers need; poll-messages on the stream is every topic's READ and a group's.
		"User:carol TOPIC:* READ", "User:carol GROUP:* READ", "User:carol GROUP:* DESCRIBE",
		"User:carol CLUSTER:kafka-cluster IDEMPOTENT_WRITE",
		"User:carol TRANSACTIONAL_ID:* WRITE", "User:carol TRANSACTIONAL_ID:* DESCRIBE",
		"User:carol TOPIC:audit WRITE", "User:carol TOPIC:audit DELETE", "User:carol TOPIC:audit ALTER",
		"User:carol TOPIC:audit DESCRIBE", "User:carol TOPIC:audit DESCRIBE_CONFIGS", "User:carol TOPIC:audit ALTER_CONFIGS",
		// WRITE and READ on orders set Iggy's send-messages and poll-messages, and read-topic
		// for the DESCRIBE Kafka implies; read-topic includes polling.
		"User:carol TOPIC:orders WRITE", "User:carol TOPIC:orders DESCRIBE", "User:carol TOPIC:orders DESCRIBE_CONFIGS",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("carol's ACLs at gateway 2:\n got %v\nwant %v", got, want)
	}
	if err := carol2.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("hers")}).FirstErr(); err != nil {
		t.Fatalf("carol writes orders at gateway 2: %v", err)
	}
	// The gateway reads a connection's permissions at most permitsFor old.
	for _, node := range []int32{1, 2} {
		checkfor.Eventually(t, 5*time.Second, fmt.Sprintf("carol finds a group's coordinator at gateway %d with group * READ", node),
			func() error { return findGroupAt(carol2, node) })
	}
	if err := findGroup(dave); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("dave (no poll permission) finds a group's coordinator: %v", err)
	}
	// A group consumer of carol's reads orders at gateway 2 and commits.
	consumer := as(g2, "carol", kgo.ConsumerGroup("carols-group"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	fs := consumer.PollFetches(ctx)
	if err := fs.Err0(); err != nil || fs.NumRecords() == 0 {
		t.Fatalf("carol's group consumer: %v, %d records", err, fs.NumRecords())
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("carol's group consumer commits: %v", err)
	}

	// Deleting a grant that another of carol's permissions implies changes nothing.
	merrs, ferr := deleteACLs(t, ops, c, topic, "audit", kmsg.ACLOperationDescribe)
	if ferr != nil || len(merrs) != 1 || !errors.Is(merrs[0], kerr.InvalidRequest) {
		t.Fatalf("deleting audit DESCRIBE, implied by ALL: %v %v", ferr, merrs)
	}
	// Deleting WRITE on orders clears it: carol's write is refused at gateway 2.
	merrs, ferr = deleteACLs(t, ops, c, topic, "orders", kmsg.ACLOperationWrite)
	if ferr != nil || len(merrs) != 1 || merrs[0] != nil {
		t.Fatalf("deleting orders WRITE: %v %v", ferr, merrs)
	}
	if err := carol2.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("refused")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("carol writes orders after the deletion: %v", err)
	}
	if errs, _ := createACLs(t, carol1, creation(c, topic, "orders", kmsg.ACLOperationWrite)); !errors.Is(errs[0], kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol grants herself after: %v", errs[0])
	}
}
