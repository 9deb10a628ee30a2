package authz

import (
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Kafka's ACLs as Iggy's permissions. An ACL allows a principal an operation on a resource: a
// topic, a group, the cluster or a transactional id, named literally or by Kafka's wildcard "*".
// Iggy has no ACLs: a user has permission flags, global, per stream and per topic. So an ACL is
// a question put to the flags, Check(acl): DescribeAcls lists for each user the ACLs its flags
// allow, the gateway authorizes each Kafka request by the same question, and CreateAcls and
// DeleteAcls set and clear the one flag an ACL stands for (GrantOf), refusing the ACLs no flag
// stands for. The gateway's Kafka topics are the topics of one Iggy stream, so Iggy's per-stream
// flags are Kafka's wildcard ACLs and the per-topic flags its literal topic ACLs; Iggy's global
// flags cover every stream, that one included.
//
// The table (operations that the same flag allows share a row):
//
//	topic T      READ                              topic T poll-messages
//	topic T      WRITE                             topic T send-messages
//	topic T      DESCRIBE, DESCRIBE_CONFIGS        topic T read-topic
//	topic T      ALTER, ALTER_CONFIGS, DELETE, ALL topic T manage-topic
//	topic *      READ                              stream poll-messages
//	topic *      WRITE                             stream send-messages
//	topic *      DESCRIBE, DESCRIBE_CONFIGS        stream read-topics
//	topic *      CREATE, ALTER, ALTER_CONFIGS, DELETE, ALL   stream manage-topics
//	group *      READ, DESCRIBE                    stream poll-messages
//	group *      DELETE                            stream manage-topics
//	cluster      CREATE                            stream manage-topics
//	cluster      IDEMPOTENT_WRITE                  stream send-messages
//	cluster      ALTER                             global manage-users
//	cluster      DESCRIBE                          global read-users
//	cluster      ALTER_CONFIGS                     global manage-servers
//	cluster      DESCRIBE_CONFIGS                  global read-servers
//	transactional id *  WRITE, DESCRIBE            stream send-messages
//
// Iggy's rule adds its implications (manage-topic allows sending, read-topic polling, a stream
// flag covers the stream's topics, ...), so Check answers what Iggy answers. Group READ is also
// allowed to a user who may poll some topic of the stream: Iggy has no groups of Kafka's kind,
// and a consumer with a grant on its topics alone must be able to join a group to read them.

// Wildcard is Kafka's name for every resource of a type.
const Wildcard = "*"

// ClusterName is the name of Kafka's one cluster resource.
const ClusterName = "kafka-cluster"

// ACL is one allowed operation on one resource.
type ACL struct {
	Resource kmsg.ACLResourceType
	Name     string // a literal name, Wildcard, or ClusterName for the cluster
	Op       kmsg.ACLOperation
}

func (a ACL) String() string {
	return fmt.Sprintf("%s %s on %s %q", "ALLOW", a.Op, a.Resource, a.Name)
}

// Level is where an Iggy flag sits.
type Level uint8

const (
	LevelGlobal Level = iota
	LevelStream
	LevelTopic
)

// Flag names one Iggy permission flag; which ones exist depends on the level.
type Flag uint8

const (
	ManageServersFlag Flag = iota + 1
	ReadServersFlag
	ManageUsersFlag
	ReadUsersFlag
	ManageTopicsFlag // at stream level
	ReadTopicsFlag   // at stream level
	PollMessagesFlag // at stream or topic level
	SendMessagesFlag // at stream or topic level
	ManageTopicFlag  // at topic level
	ReadTopicFlag    // at topic level
)

var flagNames = map[Flag]string{
	ManageServersFlag: "manage-servers", ReadServersFlag: "read-servers", ManageUsersFlag: "manage-users",
	ReadUsersFlag: "read-users", ManageTopicsFlag: "manage-topics", ReadTopicsFlag: "read-topics",
	PollMessagesFlag: "poll-messages", SendMessagesFlag: "send-messages", ManageTopicFlag: "manage-topic",
	ReadTopicFlag: "read-topic",
}

func (f Flag) String() string { return flagNames[f] }

// Grant is one Iggy flag at one place: globally, on the gateway's stream, or on one of its
// topics (Topic names it).
type Grant struct {
	Level Level
	Flag  Flag
	Topic string
}

func (g Grant) String() string {
	switch g.Level {
	case LevelGlobal:
		return "global " + g.Flag.String()
	case LevelStream:
		return "stream " + g.Flag.String()
	}
	return fmt.Sprintf("topic %q %s", g.Topic, g.Flag)
}

// ErrInexpressible is an ACL no Iggy permission stands for; the error says which part.
var ErrInexpressible = errors.New("the permissions of Iggy cannot express")

func inexpressible(format string, args ...any) error {
	return fmt.Errorf("%w %s", ErrInexpressible, fmt.Sprintf(format, args...))
}

// CheckPattern refuses what Iggy's permissions cannot hold whatever the resource: deny rules,
// hosts other than every host, and patterns other than literal names.
func CheckPattern(pattern kmsg.ACLResourcePatternType, permission kmsg.ACLPermissionType, host string) error {
	switch {
	case permission != kmsg.ACLPermissionTypeAllow:
		return inexpressible("deny rules: a user has what its permissions allow and nothing else")
	case host != Wildcard:
		return inexpressible("hosts: permissions apply from every host (host must be *)")
	case pattern != kmsg.ACLResourcePatternTypeLiteral:
		return inexpressible("prefixed patterns: topics are granted one by one or all at once (a literal name or *)")
	}
	return nil
}

// GrantOf is the one Iggy flag that acl stands for, or ErrInexpressible saying why none does.
func GrantOf(acl ACL) (Grant, error) {
	op, name := acl.Op, acl.Name
	stream := func(f Flag) (Grant, error) { return Grant{Level: LevelStream, Flag: f}, nil }
	global := func(f Flag) (Grant, error) { return Grant{Level: LevelGlobal, Flag: f}, nil }
	switch acl.Resource {
	case kmsg.ACLResourceTypeTopic:
		if name == "" {
			return Grant{}, inexpressible("a topic without a name")
		}
		if name == Wildcard {
			switch op {
			case kmsg.ACLOperationRead:
				return stream(PollMessagesFlag)
			case kmsg.ACLOperationWrite:
				return stream(SendMessagesFlag)
			case kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs:
				return stream(ReadTopicsFlag)
			case kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationDelete, kmsg.ACLOperationAll:
				return stream(ManageTopicsFlag)
			}
			break
		}
		topic := func(f Flag) (Grant, error) { return Grant{Level: LevelTopic, Flag: f, Topic: name}, nil }
		switch op {
		case kmsg.ACLOperationRead:
			return topic(PollMessagesFlag)
		case kmsg.ACLOperationWrite:
			return topic(SendMessagesFlag)
		case kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs:
			return topic(ReadTopicFlag)
		case kmsg.ACLOperationAlter, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationDelete, kmsg.ACLOperationAll:
			return topic(ManageTopicFlag)
		case kmsg.ACLOperationCreate:
			return Grant{}, inexpressible("CREATE on one topic: topic creation is granted per stream (CREATE on topic * or on the cluster)")
		}
	case kmsg.ACLResourceTypeGroup:
		if name != Wildcard {
			return Grant{}, inexpressible("one group: there are no per-group permissions (use group *)")
		}
		switch op {
		case kmsg.ACLOperationRead, kmsg.ACLOperationDescribe:
			return stream(PollMessagesFlag)
		case kmsg.ACLOperationDelete:
			return stream(ManageTopicsFlag)
		}
	case kmsg.ACLResourceTypeCluster:
		if name != ClusterName {
			return Grant{}, inexpressible("a cluster named %q: the cluster is %q", name, ClusterName)
		}
		switch op {
		case kmsg.ACLOperationCreate:
			return stream(ManageTopicsFlag)
		case kmsg.ACLOperationIdempotentWrite:
			return stream(SendMessagesFlag)
		case kmsg.ACLOperationAlter:
			return global(ManageUsersFlag)
		case kmsg.ACLOperationDescribe:
			return global(ReadUsersFlag)
		case kmsg.ACLOperationAlterConfigs:
			return global(ManageServersFlag)
		case kmsg.ACLOperationDescribeConfigs:
			return global(ReadServersFlag)
		}
	case kmsg.ACLResourceTypeTransactionalId:
		if name != Wildcard {
			return Grant{}, inexpressible("one transactional id: there are no per-transaction permissions (use transactional id *)")
		}
		switch op {
		case kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe:
			return stream(SendMessagesFlag)
		}
	default:
		return Grant{}, inexpressible("resource type %s: only topics, groups, the cluster and transactional ids", acl.Resource)
	}
	return Grant{}, inexpressible("%s on %s: no permission stands for it", op, acl.Resource)
}

// GrantsFor are the flags CreateAcls sets for acl: its own (GrantOf) and, where Kafka's
// operation implies DESCRIBE (READ, WRITE, DELETE, ALTER on a topic), the flag of the topic's
// DESCRIBE too, since a Kafka client reads a topic's metadata before it reads or writes it.
// Iggy's read-topic includes polling, so granting WRITE on a topic lets the user read it too;
// the view shows it.
func GrantsFor(acl ACL) ([]Grant, error) {
	g, err := GrantOf(acl)
	if err != nil {
		return nil, err
	}
	out := []Grant{g}
	if acl.Resource == kmsg.ACLResourceTypeTopic {
		switch acl.Op {
		case kmsg.ACLOperationRead, kmsg.ACLOperationWrite:
			d, _ := GrantOf(ACL{Resource: acl.Resource, Name: acl.Name, Op: kmsg.ACLOperationDescribe})
			out = append(out, d)
		}
	}
	return out, nil
}

// RevokesFor are the flags DeleteAcls clears for acl: its own (GrantOf) and, for READ on a
// topic, that topic's DESCRIBE flag (read-topic), since Iggy's read-topic includes polling and so
// a READ cannot go while it stays. Another flag that still allows acl leaves it allowed.
func RevokesFor(acl ACL) ([]Grant, error) {
	gs, err := GrantsFor(acl)
	if err != nil {
		return nil, err
	}
	if acl.Resource == kmsg.ACLResourceTypeTopic && acl.Op == kmsg.ACLOperationRead {
		return gs, nil
	}
	return gs[:1], nil
}

// noTopic is a topic id no topic has, so that a check made with it counts the grants above
// topic level only: what holds for every topic of the stream, Kafka's wildcard.
const noTopic = math.MaxUint32

// Topics resolves topic names of the gateway's stream to Iggy topic ids; ok false for a topic
// that does not exist.
type Topics func(name string) (id uint32, ok bool)

// CheckOf is the question acl puts to a user's flags, on the gateway's stream streamID; topics
// resolves a literal topic's name. A literal topic that does not exist is asked as any topic
// of the stream would be, as Iggy answers a missing topic before its permission.
func CheckOf(acl ACL, streamID uint32, topics Topics) Check {
	s := streamID
	t := uint32(noTopic)
	if acl.Resource == kmsg.ACLResourceTypeTopic && acl.Name != Wildcard && topics != nil {
		if id, ok := topics(acl.Name); ok {
			t = id
		}
	}
	never := func(*wire.Permissions) bool { return false }
	switch acl.Resource {
	case kmsg.ACLResourceTypeTopic:
		switch acl.Op {
		case kmsg.ACLOperationRead:
			return Poll(s, t)
		case kmsg.ACLOperationWrite:
			return Send(s, t)
		case kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs:
			return ReadTopic(s, t)
		case kmsg.ACLOperationAlter, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationDelete, kmsg.ACLOperationAll:
			return ManageTopic(s, t)
		case kmsg.ACLOperationCreate:
			return ManageTopics(s)
		}
	case kmsg.ACLResourceTypeGroup:
		switch acl.Op {
		case kmsg.ACLOperationRead, kmsg.ACLOperationDescribe:
			return pollsSome(s)
		case kmsg.ACLOperationDelete:
			return ManageTopics(s)
		}
	case kmsg.ACLResourceTypeCluster:
		switch acl.Op {
		case kmsg.ACLOperationCreate:
			return ManageTopics(s)
		case kmsg.ACLOperationIdempotentWrite:
			return sendsSome(s)
		case kmsg.ACLOperationAlter:
			return ManageUsers
		case kmsg.ACLOperationDescribe:
			return ReadUsers
		case kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationClusterAction:
			// CLUSTER_ACTION is what Kafka's brokers ask of each other (WriteTxnMarkers,
			// AddPartitionsToTxn v4): a gateway's own Iggy user, or an administrator's.
			return func(p *wire.Permissions) bool { return p.Global.ManageServers }
		case kmsg.ACLOperationDescribeConfigs:
			return ReadServers
		}
	case kmsg.ACLResourceTypeTransactionalId:
		switch acl.Op {
		case kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe:
			return sendsSome(s)
		}
	}
	return never
}

// pollsSome is whether the user may poll every topic of the stream or some topic of it.
func pollsSome(s uint32) Check {
	return func(p *wire.Permissions) bool {
		if Poll(s, noTopic)(p) {
			return true
		}
		if sp := streamPerm(p, s); sp != nil {
			for _, t := range sp.Topics {
				if Poll(s, t.TopicID)(p) {
					return true
				}
			}
		}
		return false
	}
}

// sendsSome is whether the user may send to every topic of the stream or some topic of it.
func sendsSome(s uint32) Check {
	return func(p *wire.Permissions) bool {
		if Send(s, noTopic)(p) {
			return true
		}
		if sp := streamPerm(p, s); sp != nil {
			for _, t := range sp.Topics {
				if Send(s, t.TopicID)(p) {
					return true
				}
			}
		}
		return false
	}
}

// Apply sets (set) or clears grant g in p, on stream streamID; a topic grant needs the topic's
// id, topicID. It returns a new permission set; p is not changed.
func Apply(p *wire.Permissions, g Grant, streamID, topicID uint32, set bool) *wire.Permissions {
	out := clonePerms(p)
	switch g.Level {
	case LevelGlobal:
		gl := &out.Global
		switch g.Flag {
		case ManageServersFlag:
			gl.ManageServers = set
		case ReadServersFlag:
			gl.ReadServers = set
		case ManageUsersFlag:
			gl.ManageUsers = set
		case ReadUsersFlag:
			gl.ReadUsers = set
		}
		return out
	}
	sp := streamPerm(out, streamID)
	if sp == nil {
		if !set {
			return out
		}
		out.Streams = append(out.Streams, wire.StreamPermissions{StreamID: streamID})
		sp = &out.Streams[len(out.Streams)-1]
	}
	if g.Level == LevelStream {
		switch g.Flag {
		case ManageTopicsFlag:
			sp.ManageTopics = set
		case ReadTopicsFlag:
			sp.ReadTopics = set
		case PollMessagesFlag:
			sp.PollMessages = set
		case SendMessagesFlag:
			sp.SendMessages = set
		}
		return out
	}
	tp := topicPerm(sp, topicID)
	if tp == nil {
		if !set {
			return out
		}
		sp.Topics = append(sp.Topics, wire.TopicPermissions{TopicID: topicID})
		tp = &sp.Topics[len(sp.Topics)-1]
	}
	switch g.Flag {
	case ManageTopicFlag:
		tp.ManageTopic = set
	case ReadTopicFlag:
		tp.ReadTopic = set
	case PollMessagesFlag:
		tp.PollMessages = set
	case SendMessagesFlag:
		tp.SendMessages = set
	}
	return out
}

func clonePerms(p *wire.Permissions) *wire.Permissions {
	out := &wire.Permissions{}
	if p == nil {
		return out
	}
	out.Global = p.Global
	for _, s := range p.Streams {
		s.Topics = append([]wire.TopicPermissions(nil), s.Topics...)
		out.Streams = append(out.Streams, s)
	}
	return out
}

// viewOps are the operations the view asks about, per resource type.
var viewOps = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDelete,
		kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationIdempotentWrite},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe},
}

// ACLsOf lists the ACLs a user's flags allow on the gateway's stream streamID: the wildcard and
// cluster ones, then for each topic its flags name (names gives a topic id's name; topics it
// does not name, deleted ones, are left out) the literal ones its wildcard does not already
// allow. Root, or a user with every flag, has them all.
func ACLsOf(userID uint32, p *wire.Permissions, streamID uint32, names func(topicID uint32) (string, bool)) []ACL {
	var out []ACL
	for _, res := range []kmsg.ACLResourceType{kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup,
		kmsg.ACLResourceTypeCluster, kmsg.ACLResourceTypeTransactionalId} {
		name := Wildcard
		if res == kmsg.ACLResourceTypeCluster {
			name = ClusterName
		}
		for _, op := range viewOps[res] {
			acl := ACL{Resource: res, Name: name, Op: op}
			if Allowed(userID, p, CheckOf(acl, streamID, nil)) {
				out = append(out, acl)
			}
		}
	}
	if p == nil || userID == RootID {
		return out
	}
	sp := streamPerm(p, streamID)
	if sp == nil {
		return out
	}
	for _, tp := range sp.Topics {
		name, ok := names(tp.TopicID)
		if !ok {
			continue
		}
		id := tp.TopicID
		byID := func(string) (uint32, bool) { return id, true }
		for _, op := range viewOps[kmsg.ACLResourceTypeTopic] {
			if op == kmsg.ACLOperationCreate {
				continue
			}
			lit := ACL{Resource: kmsg.ACLResourceTypeTopic, Name: name, Op: op}
			wild := ACL{Resource: kmsg.ACLResourceTypeTopic, Name: Wildcard, Op: op}
			if Allowed(userID, p, CheckOf(lit, streamID, byID)) && !Allowed(userID, p, CheckOf(wild, streamID, nil)) {
				out = append(out, lit)
			}
		}
	}
	return out
}
