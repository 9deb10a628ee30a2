package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// aclStore is kafka.ACLs over Iggy: the ACLs are a view of the Iggy users' permissions on the
// gateway's stream (package authz), read through the gateway's own login at every request, and
// a change is an update of one user's permissions in Iggy, so every gateway of a fleet shows and
// enforces the same at once. Changes made by this gateway are applied one at a time (each reads
// the user's permissions and writes them back); two gateways changing one user's permissions at
// the same moment can lose one change, as two Iggy clients updating them can.
type aclStore struct {
	admin  *iggy.Client
	stream string
	mu     sync.Mutex
}

// managesOthers reports whether the SASL user by has Iggy's manage-users permission (alter) or
// its read-users permission, read now through admin.
func managesOthers(ctx context.Context, admin *iggy.Client, by string, alter bool) (bool, error) {
	if by == "" {
		return false, nil
	}
	d, err := admin.GetUser(ctx, wire.NamedID(by))
	if err != nil {
		if errors.Is(err, wire.ResourceNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("gateway: reading the Iggy permissions of %s: %w", by, err)
	}
	check := authz.ReadUsers
	if alter {
		check = authz.ManageUsers
	}
	return d.Status == wire.UserStatusActive && authz.Allowed(d.ID, d.Permissions, check), nil
}

func (a *aclStore) Manages(ctx context.Context, by string, alter bool) (bool, error) {
	return managesOthers(ctx, a.admin, by, alter)
}

// streamTopics is the gateway's stream id and its topics by name and id.
type streamTopics struct {
	id     uint32
	byName map[string]uint32
	byID   map[uint32]string
}

func (a *aclStore) topics(ctx context.Context) (streamTopics, error) {
	d, err := a.admin.GetStream(ctx, wire.NamedID(a.stream))
	if err != nil {
		return streamTopics{}, fmt.Errorf("gateway: reading stream %s: %w", a.stream, err)
	}
	st := streamTopics{id: d.ID, byName: map[string]uint32{}, byID: map[uint32]string{}}
	for _, t := range d.Topics {
		st.byName[t.Name] = t.ID
		st.byID[t.ID] = t.Name
	}
	return st, nil
}

func (st streamTopics) name(id uint32) (string, bool) { n, ok := st.byID[id]; return n, ok }
func (st streamTopics) idOf(name string) (uint32, bool) {
	id, ok := st.byName[name]
	return id, ok
}

func (a *aclStore) Bindings(ctx context.Context) ([]kafka.ACLBinding, error) {
	st, err := a.topics(ctx)
	if err != nil {
		return nil, err
	}
	users, err := a.admin.GetUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway: listing the Iggy users: %w", err)
	}
	var out []kafka.ACLBinding
	for _, u := range users {
		if u.Status != wire.UserStatusActive {
			continue // its permissions apply to nothing
		}
		d, err := a.admin.GetUser(ctx, wire.NumericID(u.ID))
		if errors.Is(err, wire.ResourceNotFound) {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, fmt.Errorf("gateway: reading the Iggy user %s: %w", u.Username, err)
		}
		for _, acl := range authz.ACLsOf(d.ID, d.Permissions, st.id, st.name) {
			out = append(out, kafka.ACLBinding{User: d.Username, ACL: acl})
		}
	}
	return out, nil
}

// change sets (set) or clears the Iggy permission b stands for on its user: authz.GrantsFor or
// authz.RevokesFor; a clearing is refused when the user's other permissions would still allow
// the ACL.
func (a *aclStore) change(ctx context.Context, st streamTopics, b kafka.ACLBinding, set bool) error {
	grants, err := authz.GrantsFor(b.ACL)
	if !set {
		grants, err = authz.RevokesFor(b.ACL)
	}
	if err != nil {
		return kafka.Refuse(kerr.InvalidRequest, "%v", err)
	}
	d, err := a.admin.GetUser(ctx, wire.NamedID(b.User))
	if errors.Is(err, wire.ResourceNotFound) {
		return kafka.Refuse(kerr.InvalidRequest, "no Iggy user is named %q (principal %s): create it in Iggy first", b.User, b.Principal())
	} else if err != nil {
		return fmt.Errorf("gateway: reading the Iggy user %s: %w", b.User, err)
	}
	if d.ID == authz.RootID {
		return kafka.Refuse(kerr.InvalidRequest, "%s is Iggy's root user, which has every permission and whose permissions cannot change", b.User)
	}
	next := d.Permissions
	for _, g := range grants {
		var topicID uint32
		if g.Level == authz.LevelTopic {
			id, ok := st.idOf(g.Topic)
			if !ok {
				return kafka.Refuse(kerr.InvalidRequest, "topic %q does not exist: Iggy grants permissions on existing topics (or on every topic, *)", g.Topic)
			}
			topicID = id
		}
		next = authz.Apply(next, g, st.id, topicID, set)
	}
	if !set && authz.Allowed(d.ID, next, authz.CheckOf(b.ACL, st.id, st.idOf)) {
		return kafka.Refuse(kerr.InvalidRequest, "%s stays allowed to %s: another of its Iggy permissions allows it (a global one, or one that implies it); remove that one", b.Principal(), b.ACL)
	}
	if err := a.admin.UpdatePermissions(ctx, wire.NumericID(d.ID), next); err != nil {
		return fmt.Errorf("gateway: updating the Iggy permissions of %s: %w", b.User, err)
	}
	return nil
}

func (a *aclStore) apply(ctx context.Context, bindings []kafka.ACLBinding, set bool) []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	errs := make([]error, len(bindings))
	st, err := a.topics(ctx)
	for i, b := range bindings {
		if err != nil {
			errs[i] = err
			continue
		}
		errs[i] = a.change(ctx, st, b, set)
	}
	return errs
}

func (a *aclStore) Grant(ctx context.Context, bindings []kafka.ACLBinding) []error {
	return a.apply(ctx, bindings, true)
}

func (a *aclStore) Revoke(ctx context.Context, bindings []kafka.ACLBinding) []error {
	return a.apply(ctx, bindings, false)
}
