package iggy

import (
	"context"
	"fmt"
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// doer runs one call. The returned body is valid until release is called;
// release is nil when err is not.
type doer interface {
	do(ctx context.Context, cl *call) (body []byte, release func(), err error)
	config() *Config
}

// api holds the request methods shared by Client (a pool) and Session (one
// connection); both embed it, so every method here is a method of both.
type api struct{ d doer }

// run performs a call and hands the reply body to decode while the body is
// still valid.
func (a api) run(ctx context.Context, cl *call, decode func([]byte) error) error {
	body, release, err := a.d.do(ctx, cl)
	if err != nil {
		return err
	}
	defer release()
	if decode == nil {
		return nil
	}
	return decode(body)
}

// appender is a request body of package wire.
type appender interface{ AppendTo(dst []byte) []byte }

// decoder is a reply body of package wire.
type decoder interface{ Decode(b []byte) error }

// request encodes in, runs cmd and decodes the reply into out (when not
// nil). emptyErr, when not nil, is returned for an empty reply body: the
// protocol answers reads of missing things with an empty OK.
func (a api) request(ctx context.Context, cmd wire.Command, in appender, out decoder, emptyErr error) error {
	var body []byte
	if in != nil {
		body = in.AppendTo(make([]byte, 0, 64))
	}
	return a.run(ctx, &call{cmd: cmd, body: body}, func(b []byte) error {
		if len(b) == 0 && emptyErr != nil {
			return emptyErr
		}
		if out == nil {
			return nil
		}
		if err := out.Decode(b); err != nil {
			return fmt.Errorf("iggy: %s reply: %w: %w", cmd, ErrProtocol, err)
		}
		return nil
	})
}

func checkName(name string, code wire.Code) error {
	if !wire.ValidName(name) {
		return fmt.Errorf("iggy: name of %d bytes (want 1..255): %w", len(name), code)
	}
	return nil
}

// Ping asks the server for an empty reply.
func (a api) Ping(ctx context.Context) error {
	return a.run(ctx, &call{cmd: wire.CmdPing}, nil)
}

// Streams.

// CreateStream creates a stream and returns it (with no topics).
func (a api) CreateStream(ctx context.Context, name string) (*wire.StreamDetails, error) {
	if err := checkName(name, wire.InvalidStreamName); err != nil {
		return nil, err
	}
	out := new(wire.StreamDetails)
	if err := a.request(ctx, wire.CmdCreateStream, &wire.CreateStream{Name: name}, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// GetStream returns a stream with its topics, or wire.StreamIDNotFound.
func (a api) GetStream(ctx context.Context, stream wire.Identifier) (*wire.StreamDetails, error) {
	out := new(wire.StreamDetails)
	if err := a.request(ctx, wire.CmdGetStream, &wire.StreamRequest{Stream: stream}, out, wire.StreamIDNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetStreams lists every stream.
func (a api) GetStreams(ctx context.Context) ([]wire.Stream, error) {
	var out wire.StreamList
	if err := a.request(ctx, wire.CmdGetStreams, nil, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateStream renames a stream.
func (a api) UpdateStream(ctx context.Context, stream wire.Identifier, name string) error {
	if err := checkName(name, wire.InvalidStreamName); err != nil {
		return err
	}
	return a.request(ctx, wire.CmdUpdateStream, &wire.UpdateStream{Stream: stream, Name: name}, nil, nil)
}

// DeleteStream deletes a stream with its topics, groups and offsets.
func (a api) DeleteStream(ctx context.Context, stream wire.Identifier) error {
	return a.request(ctx, wire.CmdDeleteStream, &wire.StreamRequest{Stream: stream}, nil, nil)
}

// PurgeStream empties every partition of a stream, keeping its topics.
func (a api) PurgeStream(ctx context.Context, stream wire.Identifier) error {
	return a.request(ctx, wire.CmdPurgeStream, &wire.StreamRequest{Stream: stream}, nil, nil)
}

// Topics and partitions.

// TopicOptions are the optional settings of CreateTopic and UpdateTopic.
// Zero values leave the server default, as the official SDK does.
type TopicOptions struct {
	// Compression is wire.CompressionNone (or 0) or wire.CompressionGzip.
	Compression uint8
	// MessageExpiryMicros: 0 server default, wire.Unlimited never.
	MessageExpiryMicros uint64
	// MaxTopicSize in bytes: 0 server default, wire.Unlimited unlimited.
	MaxTopicSize uint64
	// Extra entries go into the options block as given (for example
	// wire.BoolEntry("enforce_fsync", true)).
	Extra []wire.TLVEntry
}

func (o TopicOptions) block() []byte {
	var entries []wire.TLVEntry
	switch o.Compression {
	case 0, wire.CompressionNone:
	case wire.CompressionGzip:
		entries = append(entries, wire.StringEntry("compression_algorithm", "gzip"))
	default:
		entries = append(entries, wire.Uint8Entry("compression_algorithm", o.Compression))
	}
	if o.MessageExpiryMicros != 0 {
		entries = append(entries, wire.Uint64Entry("message_expiry", o.MessageExpiryMicros))
	}
	if o.MaxTopicSize != 0 {
		entries = append(entries, wire.Uint64Entry("max_topic_size", o.MaxTopicSize))
	}
	entries = append(entries, o.Extra...)
	if len(entries) == 0 {
		return nil
	}
	return wire.AppendTLV(nil, entries...)
}

// maxPartitions is the most partitions one create or delete may name.
const maxPartitions = 1000

// CreateTopic creates a topic with partitions 0..partitions-1.
func (a api) CreateTopic(ctx context.Context, stream wire.Identifier, name string, partitions uint32, opts TopicOptions) (*wire.TopicDetails, error) {
	if err := checkName(name, wire.InvalidTopicName); err != nil {
		return nil, err
	}
	if partitions > maxPartitions {
		return nil, fmt.Errorf("iggy: %d partitions (at most %d): %w", partitions, maxPartitions, wire.TooManyPartitions)
	}
	for _, e := range a.d.config().TopicDurability.options() {
		if !slices.ContainsFunc(opts.Extra, func(x wire.TLVEntry) bool { return string(x.Key) == string(e.Key) }) {
			opts.Extra = append(opts.Extra, e)
		}
	}
	out := new(wire.TopicDetails)
	req := &wire.CreateTopic{Stream: stream, PartitionsCount: partitions, Name: name, Options: opts.block()}
	if err := a.request(ctx, wire.CmdCreateTopic, req, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// GetTopic returns a topic with its partitions, or wire.TopicIDNotFound.
func (a api) GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error) {
	out := new(wire.TopicDetails)
	if err := a.request(ctx, wire.CmdGetTopic, &wire.TopicRequest{Stream: stream, Topic: topic}, out, wire.TopicIDNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetTopics lists the topics of a stream (none for a missing stream).
func (a api) GetTopics(ctx context.Context, stream wire.Identifier) ([]wire.Topic, error) {
	var out wire.TopicList
	if err := a.request(ctx, wire.CmdGetTopics, &wire.StreamRequest{Stream: stream}, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateTopic renames a topic and changes its updatable options.
func (a api) UpdateTopic(ctx context.Context, stream, topic wire.Identifier, name string, opts TopicOptions) error {
	if err := checkName(name, wire.InvalidTopicName); err != nil {
		return err
	}
	req := &wire.UpdateTopic{Stream: stream, Topic: topic, Name: name, Options: opts.block()}
	return a.request(ctx, wire.CmdUpdateTopic, req, nil, nil)
}

// DeleteTopic deletes a topic with its partitions, groups and offsets.
func (a api) DeleteTopic(ctx context.Context, stream, topic wire.Identifier) error {
	return a.request(ctx, wire.CmdDeleteTopic, &wire.TopicRequest{Stream: stream, Topic: topic}, nil, nil)
}

// PurgeTopic empties every partition of a topic.
func (a api) PurgeTopic(ctx context.Context, stream, topic wire.Identifier) error {
	return a.request(ctx, wire.CmdPurgeTopic, &wire.TopicRequest{Stream: stream, Topic: topic}, nil, nil)
}

// CreatePartitions adds count partitions after the highest existing one.
func (a api) CreatePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	return a.request(ctx, wire.CmdCreatePartitions, &wire.PartitionsRequest{Stream: stream, Topic: topic, Count: count}, nil, nil)
}

// DeletePartitions removes the count partitions with the highest ids.
func (a api) DeletePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	return a.request(ctx, wire.CmdDeletePartitions, &wire.PartitionsRequest{Stream: stream, Topic: topic, Count: count}, nil, nil)
}

// DeleteSegments removes the oldest count sealed segments of a partition.
func (a api) DeleteSegments(ctx context.Context, stream, topic wire.Identifier, partition, count uint32) error {
	req := &wire.DeleteSegments{Stream: stream, Topic: topic, PartitionID: partition, SegmentsCount: count}
	return a.request(ctx, wire.CmdDeleteSegments, req, nil, nil)
}

// Consumer offsets.

// StoreOffset stores offset for consumer on one partition.
func (a api) StoreOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition uint32, offset uint64) error {
	req := &wire.StoreConsumerOffset{Consumer: consumer, Stream: stream, Topic: topic,
		Partition: wire.SomePartition(partition), Offset: offset, Ack: wire.AckQuorum}
	return a.request(ctx, wire.CmdStoreConsumerOffset, req, nil, nil)
}

// GetOffset returns the stored offset of consumer on one partition; ok is
// false when none is stored.
func (a api) GetOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition uint32) (off wire.ConsumerOffset, ok bool, err error) {
	req := &wire.GetConsumerOffset{Consumer: consumer, Stream: stream, Topic: topic, Partition: wire.SomePartition(partition)}
	err = a.run(ctx, &call{cmd: wire.CmdGetConsumerOffset, body: req.AppendTo(nil)}, func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		ok = true
		if err := off.Decode(b); err != nil {
			return fmt.Errorf("iggy: consumer offset reply: %w: %w", ErrProtocol, err)
		}
		return nil
	})
	return off, ok, err
}

// DeleteOffset deletes the stored offset of consumer on one partition
// (wire.ConsumerOffsetNotFound when there is none).
func (a api) DeleteOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition uint32) error {
	req := &wire.DeleteConsumerOffset{Consumer: consumer, Stream: stream, Topic: topic,
		Partition: wire.SomePartition(partition), Ack: wire.AckQuorum}
	return a.request(ctx, wire.CmdDeleteConsumerOffset, req, nil, nil)
}

// Consumer groups.

// CreateConsumerGroup creates a group on a topic.
func (a api) CreateConsumerGroup(ctx context.Context, stream, topic wire.Identifier, name string) (*wire.ConsumerGroupDetails, error) {
	if err := checkName(name, wire.InvalidConsumerGroupName); err != nil {
		return nil, err
	}
	out := new(wire.ConsumerGroupDetails)
	if err := a.request(ctx, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{Stream: stream, Topic: topic, Name: name}, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// GetConsumerGroup returns a group with its members, or
// wire.ConsumerGroupIDNotFound.
func (a api) GetConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.ConsumerGroupDetails, error) {
	out := new(wire.ConsumerGroupDetails)
	req := &wire.GroupRequest{Stream: stream, Topic: topic, Group: group}
	if err := a.request(ctx, wire.CmdGetConsumerGroup, req, out, wire.ConsumerGroupIDNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetConsumerGroups lists the groups of a topic.
func (a api) GetConsumerGroups(ctx context.Context, stream, topic wire.Identifier) ([]wire.ConsumerGroup, error) {
	var out wire.ConsumerGroupList
	if err := a.request(ctx, wire.CmdGetConsumerGroups, &wire.TopicRequest{Stream: stream, Topic: topic}, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteConsumerGroup deletes a group and its offsets.
func (a api) DeleteConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return a.request(ctx, wire.CmdDeleteConsumerGroup, &wire.GroupRequest{Stream: stream, Topic: topic, Group: group}, nil, nil)
}

// JoinConsumerGroup makes the calling connection a member. Membership
// belongs to the connection: use it through a Session.
func (a api) JoinConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return a.request(ctx, wire.CmdJoinConsumerGroup, &wire.GroupRequest{Stream: stream, Topic: topic, Group: group}, nil, nil)
}

// LeaveConsumerGroup ends the calling connection's membership.
func (a api) LeaveConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return a.request(ctx, wire.CmdLeaveConsumerGroup, &wire.GroupRequest{Stream: stream, Topic: topic, Group: group}, nil, nil)
}

// SyncConsumerGroup returns the partitions the calling member may poll now
// and the group generation; wire.ConsumerGroupMemberNotFound when the
// connection is not a member.
func (a api) SyncConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.GroupAssignment, error) {
	out := new(wire.GroupAssignment)
	req := &wire.GroupRequest{Stream: stream, Topic: topic, Group: group}
	if err := a.request(ctx, wire.CmdSyncConsumerGroup, req, out, wire.ConsumerGroupMemberNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// Clients, system.

// Me describes the calling connection.
func (a api) Me(ctx context.Context) (*wire.ClientDetails, error) {
	out := new(wire.ClientDetails)
	if err := a.request(ctx, wire.CmdGetMe, nil, out, wire.ClientNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetClient describes one connection, or wire.ClientNotFound.
func (a api) GetClient(ctx context.Context, id uint32) (*wire.ClientDetails, error) {
	out := new(wire.ClientDetails)
	if err := a.request(ctx, wire.CmdGetClient, &wire.GetClient{ClientID: id}, out, wire.ClientNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetClients lists the server's connections.
func (a api) GetClients(ctx context.Context) ([]wire.ClientInfo, error) {
	var out wire.ClientList
	if err := a.request(ctx, wire.CmdGetClients, nil, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// Stats returns the server statistics.
func (a api) Stats(ctx context.Context) (*wire.Stats, error) {
	out := new(wire.Stats)
	if err := a.request(ctx, wire.CmdGetStats, nil, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterMetadata returns the cluster roster as the server reports it.
func (a api) ClusterMetadata(ctx context.Context) (*wire.ClusterMetadata, error) {
	out := new(wire.ClusterMetadata)
	if err := a.request(ctx, wire.CmdGetClusterMetadata, nil, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// DescribeOptions returns the option catalog of a scope.
func (a api) DescribeOptions(ctx context.Context, scope wire.OptionsScope) (wire.OptionSpecs, error) {
	var out wire.OptionSpecs
	if err := a.request(ctx, wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: scope}, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// Snapshot returns the server's diagnostic snapshot (ZIP archive bytes).
func (a api) Snapshot(ctx context.Context, compression uint8, types ...uint8) ([]byte, error) {
	var out []byte
	err := a.run(ctx, &call{cmd: wire.CmdGetSnapshot, body: (&wire.GetSnapshot{Compression: compression, Types: types}).AppendTo(nil)},
		func(b []byte) error {
			out = append([]byte(nil), b...)
			return nil
		})
	return out, err
}
