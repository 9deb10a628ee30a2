package gateway

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Bad input to the ACL APIs gets one clear error each and changes nothing; a flood of grants,
// many per request and many requests at once, loses none.
func TestACLBadInputAndFlood(t *testing.T) {
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
	root := client(t, g, kgo.SASL(plain.Auth{User: "iggy", Pass: "iggy"}.AsMechanism()))
	const topics = 40
	var names []string
	for i := range topics {
		names = append(names, fmt.Sprintf("flood-%02d", i))
	}
	if rs, err := kadm.NewClient(root).CreateTopics(ctx, 1, 1, nil, names...); err != nil || rs.Error() != nil {
		t.Fatalf("creating the topics: %v %v", err, rs.Error())
	}
	const c = "User:carol"
	topic := kmsg.ACLResourceTypeTopic

	// Creations Iggy cannot hold, each with its own error.
	noResource := creation(c, kmsg.ACLResourceTypeUnknown, "x", kmsg.ACLOperationRead)
	anyResource := creation(c, kmsg.ACLResourceTypeAny, "x", kmsg.ACLOperationRead)
	anyOp := creation(c, topic, names[0], kmsg.ACLOperationAny)
	unknownPattern := creation(c, topic, names[0], kmsg.ACLOperationRead)
	unknownPattern.ResourcePatternType = kmsg.ACLResourcePatternTypeUnknown
	matchPattern := creation(c, topic, names[0], kmsg.ACLOperationRead)
	matchPattern.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
	emptyName := creation(c, topic, "", kmsg.ACLOperationRead)
	emptyPrincipal := creation("User:", topic, names[0], kmsg.ACLOperationRead)
	noPrincipal := creation("carol", topic, names[0], kmsg.ACLOperationRead)
	errs, msgs := createACLs(t, root, noResource, anyResource, anyOp, unknownPattern, matchPattern, emptyName, emptyPrincipal, noPrincipal)
	for i, err := range errs {
		if !errors.Is(err, kerr.InvalidRequest) || msgs[i] == "" {
			t.Errorf("bad creation %d: %v %q", i, err, msgs[i])
		}
	}
	// Filters with an UNKNOWN field.
	for name, mod := range map[string]func(*kmsg.DescribeACLsRequest){
		"resource": func(r *kmsg.DescribeACLsRequest) { r.ResourceType = kmsg.ACLResourceTypeUnknown },
		"pattern":  func(r *kmsg.DescribeACLsRequest) { r.ResourcePatternType = kmsg.ACLResourcePatternTypeUnknown },
		"op":       func(r *kmsg.DescribeACLsRequest) { r.Operation = kmsg.ACLOperationUnknown },
		"perm":     func(r *kmsg.DescribeACLsRequest) { r.PermissionType = kmsg.ACLPermissionTypeUnknown },
	} {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		mod(req)
		resp, err := req.RequestWith(ctx, root)
		if err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("describe with an UNKNOWN %s: %v %+v", name, err, resp)
		}
	}
	// None of it changed carol's permissions.
	if rows, err := describeACLs(t, root, kmsg.StringPtr(c)); err != nil || len(rows) != 0 {
		t.Fatalf("carol's ACLs after the bad input: %v %v", rows, err)
	}

	// The flood: WRITE and READ on every topic, half in one request, half in one request per
	// topic sent at once over eight connections.
	var flood []kmsg.CreateACLsRequestCreation
	for _, n := range names[:topics/2] {
		flood = append(flood, creation(c, topic, n, kmsg.ACLOperationWrite), creation(c, topic, n, kmsg.ACLOperationRead))
	}
	errs, msgs = createACLs(t, root, flood...)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("flood creation %d: %v %s", i, err, msgs[i])
		}
	}
	var conns []*kgo.Client
	for range 8 {
		conns = append(conns, client(t, g, kgo.SASL(plain.Auth{User: "iggy", Pass: "iggy"}.AsMechanism())))
	}
	var wg sync.WaitGroup
	failures := make(chan error, topics)
	for i, n := range names[topics/2:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrCreateACLsRequest()
			req.Creations = []kmsg.CreateACLsRequestCreation{creation(c, topic, n, kmsg.ACLOperationWrite), creation(c, topic, n, kmsg.ACLOperationRead)}
			resp, err := req.RequestWith(ctx, conns[i%len(conns)])
			if err == nil {
				for _, r := range resp.Results {
					err = errors.Join(err, kerr.ErrorForCode(r.ErrorCode))
				}
			}
			if err != nil {
				failures <- fmt.Errorf("%s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	rows, err := describeACLs(t, root, kmsg.StringPtr(c))
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]bool{}
	for _, r := range rows {
		if r.res == topic && r.op == kmsg.ACLOperationWrite {
			writes[r.name] = true
		}
	}
	for _, n := range names {
		if !writes[n] {
			t.Errorf("carol's WRITE on %s is missing after the flood", n)
		}
	}
}
