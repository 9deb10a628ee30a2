package authz

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func TestRule(t *testing.T) {
	topicOnly := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 1,
		Topics: []wire.TopicPermissions{{TopicID: 2, SendMessages: true}, {TopicID: 3, ReadTopic: true}}}}}
	streamManager := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 1, ManageStream: true}}}
	globalPoll := &wire.Permissions{Global: wire.GlobalPermissions{PollMessages: true, ReadUsers: true}}
	for _, c := range []struct {
		name  string
		user  uint32
		p     *wire.Permissions
		check Check
		want  bool
	}{
		{"root passes without permissions", RootID, nil, ManageUsers, true},
		{"no permissions", 5, nil, ReadStreams, false},
		{"topic send grant", 5, topicOnly, Send(1, 2), true},
		{"topic send grant is not poll", 5, topicOnly, Poll(1, 2), false},
		{"topic send grant is that topic's only", 5, topicOnly, Send(1, 3), false},
		{"topic send grant is that stream's only", 5, topicOnly, Send(2, 2), false},
		{"read topic implies poll", 5, topicOnly, Poll(1, 3), true},
		{"read topic is not manage", 5, topicOnly, ManageTopic(1, 3), false},
		{"manage stream covers its topics", 5, streamManager, ManageTopic(1, 9), true},
		{"manage stream implies send", 5, streamManager, Send(1, 9), true},
		{"manage stream creates topics", 5, streamManager, ManageTopics(1), true},
		{"manage stream is that stream's only", 5, streamManager, ManageTopics(2), false},
		{"manage stream is not manage streams", 5, streamManager, ManageStreams, false},
		{"global poll", 5, globalPoll, Poll(7, 7), true},
		{"global poll is not send", 5, globalPoll, Send(7, 7), false},
		{"read users is not manage users", 5, globalPoll, ManageUsers, false},
		{"read users", 5, globalPoll, ReadUsers, true},
	} {
		if got := Allowed(c.user, c.p, c.check); got != c.want {
			t.Errorf("%s: Allowed = %v, want %v", c.name, got, c.want)
		}
	}
}
