package authz

import "github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"

// Check reports whether a permission set allows one thing.
type Check func(p *wire.Permissions) bool

// RootID is the Iggy user id of root, which every check lets through.
const RootID = 0

// Allowed reports whether the user with id userID and permissions p passes check: root passes
// everything, a user without permissions nothing else.
func Allowed(userID uint32, p *wire.Permissions, check Check) bool {
	if userID == RootID {
		return true
	}
	return p != nil && check(p)
}

func streamPerm(p *wire.Permissions, streamID uint32) *wire.StreamPermissions {
	for i := range p.Streams {
		if p.Streams[i].StreamID == streamID {
			return &p.Streams[i]
		}
	}
	return nil
}

func topicPerm(sp *wire.StreamPermissions, topicID uint32) *wire.TopicPermissions {
	if sp == nil {
		return nil
	}
	for i := range sp.Topics {
		if sp.Topics[i].TopicID == topicID {
			return &sp.Topics[i]
		}
	}
	return nil
}

// ReadServers is reading the server's stats, clients and cluster metadata.
func ReadServers(p *wire.Permissions) bool { return p.Global.ManageServers || p.Global.ReadServers }

// ManageUsers is creating, changing and deleting users.
func ManageUsers(p *wire.Permissions) bool { return p.Global.ManageUsers }

// ReadUsers is reading other users.
func ReadUsers(p *wire.Permissions) bool { return p.Global.ManageUsers || p.Global.ReadUsers }

// ManageStreams is creating streams (and managing every stream).
func ManageStreams(p *wire.Permissions) bool { return p.Global.ManageStreams }

// ReadStreams is listing the streams.
func ReadStreams(p *wire.Permissions) bool { return p.Global.ManageStreams || p.Global.ReadStreams }

// ManageStream is changing or deleting one stream.
func ManageStream(streamID uint32) Check {
	return func(p *wire.Permissions) bool {
		if p.Global.ManageStreams {
			return true
		}
		sp := streamPerm(p, streamID)
		return sp != nil && sp.ManageStream
	}
}

// ReadStream is reading one stream and listing its topics.
func ReadStream(streamID uint32) Check {
	return func(p *wire.Permissions) bool {
		if ReadStreams(p) {
			return true
		}
		sp := streamPerm(p, streamID)
		return sp != nil && (sp.ManageStream || sp.ReadStream)
	}
}

// ManageTopic is changing, growing, purging or deleting one topic.
func ManageTopic(streamID, topicID uint32) Check {
	return func(p *wire.Permissions) bool {
		if p.Global.ManageStreams || p.Global.ManageTopics {
			return true
		}
		sp := streamPerm(p, streamID)
		if sp != nil && (sp.ManageStream || sp.ManageTopics) {
			return true
		}
		tp := topicPerm(sp, topicID)
		return tp != nil && tp.ManageTopic
	}
}

// ManageTopics is creating a topic in a stream.
func ManageTopics(streamID uint32) Check {
	return func(p *wire.Permissions) bool {
		if p.Global.ManageStreams || p.Global.ManageTopics {
			return true
		}
		sp := streamPerm(p, streamID)
		return sp != nil && (sp.ManageStream || sp.ManageTopics)
	}
}

// ReadTopic is reading one topic's metadata (and its consumer groups).
func ReadTopic(streamID, topicID uint32) Check {
	return func(p *wire.Permissions) bool {
		g := p.Global
		if g.ManageStreams || g.ReadStreams || g.ManageTopics || g.ReadTopics {
			return true
		}
		sp := streamPerm(p, streamID)
		if sp != nil && (sp.ManageStream || sp.ReadStream || sp.ManageTopics || sp.ReadTopics) {
			return true
		}
		tp := topicPerm(sp, topicID)
		return tp != nil && (tp.ManageTopic || tp.ReadTopic)
	}
}

// Poll is reading one topic's messages and storing consumer offsets on it.
func Poll(streamID, topicID uint32) Check {
	return func(p *wire.Permissions) bool {
		if p.Global.PollMessages || ReadTopic(streamID, topicID)(p) {
			return true
		}
		sp := streamPerm(p, streamID)
		if sp != nil && sp.PollMessages {
			return true
		}
		tp := topicPerm(sp, topicID)
		return tp != nil && tp.PollMessages
	}
}

// Send is appending messages to one topic.
func Send(streamID, topicID uint32) Check {
	return func(p *wire.Permissions) bool {
		if p.Global.SendMessages || ManageTopic(streamID, topicID)(p) {
			return true
		}
		sp := streamPerm(p, streamID)
		if sp != nil && sp.SendMessages {
			return true
		}
		tp := topicPerm(sp, topicID)
		return tp != nil && tp.SendMessages
	}
}
