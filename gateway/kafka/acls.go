package kafka

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// ACLs shows and changes Iggy's permissions as Kafka ACLs (Config.ACLs): every binding is an
// allow rule for a user, on a literal name or the wildcard, from every host, as package authz
// maps it; Iggy holds the state, so every gateway answers alike.
type ACLs interface {
	// Manages reports whether the SASL user by may change (alter) or read the ACLs of every
	// user: Iggy's manage-users or read-users permission (Kafka's ALTER or DESCRIBE on the
	// cluster).
	Manages(ctx context.Context, by string, alter bool) (bool, error)
	// Bindings lists the ACLs of every Iggy user.
	Bindings(ctx context.Context) ([]ACLBinding, error)
	// Grant sets the Iggy permission each binding stands for; one error per binding, nil when
	// it is granted. Bindings of one user are applied in order.
	Grant(ctx context.Context, bindings []ACLBinding) []error
	// Revoke clears the Iggy permission each binding stands for; one error per binding (a
	// binding another of the user's permissions still allows is an error, and changes nothing).
	Revoke(ctx context.Context, bindings []ACLBinding) []error
}

// ACLBinding is one ACL of one user.
type ACLBinding struct {
	User string // the Iggy user; principal "User:<User>"
	authz.ACL
}

// Refuse is an error answered with code and, as the error message, the text alone (Kafka's
// clients show it beside the code's own description).
func Refuse(code *kerr.Error, format string, args ...any) error {
	return refusal{code: code, msg: fmt.Sprintf(format, args...)}
}

type refusal struct {
	code *kerr.Error
	msg  string
}

func (r refusal) Error() string { return r.msg }
func (r refusal) Unwrap() error { return r.code }

// principalPrefix is the principal type of every binding: Iggy has users and nothing else.
const principalPrefix = "User:"

// Principal is the binding's Kafka principal.
func (b ACLBinding) Principal() string { return principalPrefix + b.User }

// aclFilter is the match part of a DescribeAcls request or a DeleteAcls filter.
type aclFilter struct {
	resource   kmsg.ACLResourceType
	name       *string
	pattern    kmsg.ACLResourcePatternType
	principal  *string
	host       *string
	op         kmsg.ACLOperation
	permission kmsg.ACLPermissionType
}

// check refuses a filter Kafka refuses: an UNKNOWN field (INVALID_REQUEST).
func (f aclFilter) check() error {
	switch {
	case f.resource == kmsg.ACLResourceTypeUnknown:
		return Refuse(kerr.InvalidRequest, "resource type UNKNOWN")
	case f.pattern == kmsg.ACLResourcePatternTypeUnknown:
		return Refuse(kerr.InvalidRequest, "pattern type UNKNOWN")
	case f.op == kmsg.ACLOperationUnknown:
		return Refuse(kerr.InvalidRequest, "operation UNKNOWN")
	case f.permission == kmsg.ACLPermissionTypeUnknown:
		return Refuse(kerr.InvalidRequest, "permission type UNKNOWN")
	}
	return nil
}

// matches reports whether the filter selects b, as Kafka's AclBindingFilter does; every binding
// is a literal allow from every host.
func (f aclFilter) matches(b ACLBinding) bool {
	if f.resource != kmsg.ACLResourceTypeAny && f.resource != b.Resource {
		return false
	}
	switch f.pattern {
	case kmsg.ACLResourcePatternTypeAny, kmsg.ACLResourcePatternTypeLiteral:
		if f.name != nil && *f.name != b.Name {
			return false
		}
	case kmsg.ACLResourcePatternTypeMatch:
		if f.name != nil && *f.name != b.Name && b.Name != authz.Wildcard {
			return false
		}
	default:
		return false // prefixed: none is
	}
	if f.principal != nil && *f.principal != b.Principal() {
		return false
	}
	if f.host != nil && *f.host != authz.Wildcard {
		return false
	}
	if f.op != kmsg.ACLOperationAny && f.op != b.Op {
		return false
	}
	return f.permission == kmsg.ACLPermissionTypeAny || f.permission == kmsg.ACLPermissionTypeAllow
}

// parseCreation is a CreateAcls creation as a binding, or why Iggy cannot hold it
// (INVALID_REQUEST, the message naming it).
func parseCreation(c kmsg.CreateACLsRequestCreation) (ACLBinding, error) {
	if err := authz.CheckPattern(c.ResourcePatternType, c.PermissionType, c.Host); err != nil {
		return ACLBinding{}, Refuse(kerr.InvalidRequest, "%v", err)
	}
	user, ok := strings.CutPrefix(c.Principal, principalPrefix)
	if !ok || user == "" {
		return ACLBinding{}, Refuse(kerr.InvalidRequest, "principal %q: Iggy's permissions belong to users (User:<name>)", c.Principal)
	}
	b := ACLBinding{User: user, ACL: authz.ACL{Resource: c.ResourceType, Name: c.ResourceName, Op: c.Operation}}
	if _, err := authz.GrantOf(b.ACL); err != nil {
		return ACLBinding{}, Refuse(kerr.InvalidRequest, "%v", err)
	}
	return b, nil
}

// aclsOf is Config.ACLs, or without it a server whose connections all act as one Iggy login:
// no user has ACLs to show, and none can be changed.
func (s *Server) aclsOf() ACLs {
	if s.cfg.ACLs == nil {
		return noACLs{}
	}
	return s.cfg.ACLs
}

type noACLs struct{}

var errNoACLs = Refuse(kerr.SecurityDisabled, "this gateway keeps no users (serve --sasl shows and changes Iggy's permissions as ACLs)")

func (noACLs) Manages(context.Context, string, bool) (bool, error) { return false, errNoACLs }
func (noACLs) Bindings(context.Context) ([]ACLBinding, error)      { return nil, errNoACLs }
func (noACLs) Grant(_ context.Context, b []ACLBinding) []error     { return repeatErr(len(b), errNoACLs) }
func (noACLs) Revoke(_ context.Context, b []ACLBinding) []error    { return repeatErr(len(b), errNoACLs) }

func repeatErr(n int, err error) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// aclAuthorized checks that the connection may read (alter false) or change the ACLs; nil when
// it may, else the error to answer.
func (c *conn) aclAuthorized(req *request, alter bool) error {
	if req.user == "" {
		if _, err := c.s.aclsOf().Manages(req.ctx, "", alter); err != nil {
			return err
		}
		return Refuse(kerr.ClusterAuthorizationFailed, "a connection that did not authenticate changes no permissions")
	}
	ok, err := c.s.aclsOf().Manages(req.ctx, req.user, alter)
	if err != nil {
		return err
	}
	if !ok {
		what := "reading ACLs needs Iggy's read-users permission (DESCRIBE on the cluster)"
		if alter {
			what = "changing ACLs needs Iggy's manage-users permission (ALTER on the cluster)"
		}
		return Refuse(kerr.ClusterAuthorizationFailed, "%s", what)
	}
	return nil
}
