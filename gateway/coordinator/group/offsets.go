package group

import (
	"context"
	"errors"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// errCode is the Kafka code of a storage error.
func errCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// topicCodes checks that each topic exists and is visible to the connection's identity, and
// returns the code of every topic that is not (and its partition count otherwise).
func topicCodes(ctx context.Context, id kafka.Identity, topics []string) (codes map[string]int16, parts map[string]int32) {
	codes = make(map[string]int16)
	parts = make(map[string]int32)
	if id.Storage == nil {
		return codes, nil
	}
	for _, t := range topics {
		if _, done := codes[t]; done {
			continue
		}
		info, err := id.Storage.Topic(ctx, t, false)
		if err != nil {
			codes[t] = errCode(err)
			continue
		}
		codes[t] = 0
		parts[t] = info.Partitions
	}
	return codes, parts
}

// CommitOffsets serves one OffsetCommit. A commit with generation -1 and no member id to a group
// without members is the simple-consumer pattern and needs no membership. Every partition is one
// record; the answer waits for the log.
func (m *Manager) CommitOffsets(ctx context.Context, id kafka.Identity, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := make([][]int16, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
	}
	all := func(code int16) {
		for i := range codes {
			for j := range codes[i] {
				codes[i][j] = code
			}
		}
	}
	answer := func() *kmsg.OffsetCommitResponse {
		for i, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			rt.TopicID = t.TopicID
			for j, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = codes[i][j]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}

	if req.Version >= 10 {
		// Topics by id: this gateway hands out no topic ids, so none can be resolved.
		all(kerr.UnknownTopicID.Code)
		return answer()
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	tcodes, tparts := topicCodes(ctx, id, names)
	if m.cfg.CommitTopic != nil {
		asked := make(map[string]bool, len(names))
		for _, t := range names {
			if tcodes[t] != 0 || asked[t] {
				continue
			}
			asked[t] = true
			if err := m.cfg.CommitTopic(ctx, m, t); err != nil {
				tcodes[t] = m.commitTopicCode(err)
			}
		}
	}

	m.mu.Lock()
	code := m.commitCode(req)
	if code != 0 {
		m.mu.Unlock()
		all(code)
		return answer()
	}
	g := m.groupOrNew(req.Group)
	if mem := g.members[req.MemberID]; mem != nil {
		m.heartbeat(g, mem)
	}
	// A consumer group's commit at an older member epoch is checked partition by partition.
	var stale func(topic string, p int32) int16
	if g.cg != nil {
		_, stale = g.cg.CommitCode(req.MemberID, req.Generation, req.Version)
	}
	now := m.clk.Now()
	retention := m.cfg.OffsetRetention
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis > 0 {
		retention = ms(int32(min(req.RetentionTimeMillis, 1<<31-1)))
	}
	var recs []record.Record
	type at struct{ i, j int }
	var where []at
	for i, t := range req.Topics {
		for j, p := range t.Partitions {
			switch {
			case tcodes[t.Topic] != 0:
				codes[i][j] = tcodes[t.Topic]
				continue
			case tparts != nil && (p.Partition < 0 || p.Partition >= tparts[t.Topic]):
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
				continue
			case p.Metadata != nil && len(*p.Metadata) > maxMetadata:
				codes[i][j] = kerr.OffsetMetadataTooLarge.Code
				continue
			case stale != nil && stale(t.Topic, p.Partition) != 0:
				codes[i][j] = stale(t.Topic, p.Partition)
				continue
			}
			oc := record.OffsetCommit{
				Group:       req.Group,
				Topic:       t.Topic,
				Partition:   p.Partition,
				Offset:      p.Offset,
				LeaderEpoch: -1,
				Expire:      now.Add(retention),
			}
			if req.Version >= 6 {
				oc.LeaderEpoch = p.LeaderEpoch
			}
			if p.Metadata != nil {
				oc.Metadata = *p.Metadata
			}
			recs = append(recs, record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &oc})
			where = append(where, at{i, j})
		}
	}
	if len(recs) == 0 {
		m.dropIfUnused(g)
		m.mu.Unlock()
		return answer()
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		for _, w := range where {
			codes[w.i][w.j] = code
		}
		m.dropIfUnused(g)
		return answer()
	}
	for _, r := range recs {
		oc := *r.OffsetCommit
		g.offsets[tp{oc.Topic, oc.Partition}] = oc
	}
	return answer()
}

// commitTopicCode is the code of a topic that Config.CommitTopic refused.
func (m *Manager) commitTopicCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) && !errors.Is(err, ErrNotCoordinator) {
		return ke.Code
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.journalCode(err)
}

// commitCode is Kafka's validation of a group commit. Called with m.mu held.
func (m *Manager) commitCode(req *kmsg.OffsetCommitRequest) int16 {
	if m.closed {
		return kerr.NotCoordinator.Code
	}
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g := m.groups[req.Group]
	simple := req.Generation < 0 && req.MemberID == "" && (req.InstanceID == nil || *req.InstanceID == "")
	if g == nil {
		if simple || req.Version == 0 {
			return 0
		}
		return kerr.IllegalGeneration.Code
	}
	if g.state == stDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if g.cg != nil {
		code, _ := g.cg.CommitCode(req.MemberID, req.Generation, req.Version)
		return code
	}
	if req.Version == 0 {
		// v0 carries no generation or member: Kafka treats it as a simple commit.
		simple = true
	}
	if simple {
		if len(g.members) > 0 {
			return kerr.UnknownMemberID.Code
		}
		return 0
	}
	if code := g.checkMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if g.state == stCompleting {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// FetchOffsets answers one group of an OffsetFetch: topics nil means every committed offset of
// the group. Partitions without a committed offset are -1, unless Config.FallbackOffset knows
// one. With requireStable, a partition an open transaction holds staged offsets of
// (Unstable) is UNSTABLE_OFFSET_COMMIT, and the client asks again. The
// member id and epoch (v9+; nil and -1 before) are checked against a consumer group's members as
// Kafka checks them (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); a classic group ignores them.
func (m *Manager) FetchOffsets(ctx context.Context, id kafka.Identity, group string, topics []kmsg.OffsetFetchRequestGroupTopic, requireStable bool, memberID *string, memberEpoch int32) kmsg.OffsetFetchResponseGroup {
	rg := kmsg.NewOffsetFetchResponseGroup()
	rg.Group = group
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		rg.ErrorCode = kerr.NotCoordinator.Code
		return rg
	}
	if g := m.groups[group]; g != nil && g.cg != nil {
		if code := g.cg.FetchCode(memberID, memberEpoch); code != 0 {
			m.mu.Unlock()
			rg.ErrorCode = code
			return rg
		}
	}
	var have map[tp]record.OffsetCommit
	if g := m.groups[group]; g != nil {
		have = make(map[tp]record.OffsetCommit, len(g.offsets))
		for k, v := range g.offsets {
			have[k] = v
		}
	}
	m.mu.Unlock()

	unstable := func(topic string, p int32) bool {
		return requireStable && m.Unstable(group, topic, p)
	}
	part := func(topic string, p int32, oc record.OffsetCommit) kmsg.OffsetFetchResponseGroupTopicPartition {
		sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		sp.Partition = p
		if unstable(topic, p) {
			sp.Offset, sp.LeaderEpoch, sp.Metadata = -1, -1, kmsg.StringPtr("")
			sp.ErrorCode = kerr.UnstableOffsetCommit.Code
			return sp
		}
		sp.Offset = oc.Offset
		sp.LeaderEpoch = oc.LeaderEpoch
		sp.Metadata = kmsg.StringPtr(oc.Metadata)
		return sp
	}
	if topics == nil {
		byTopic := make(map[string][]kmsg.OffsetFetchResponseGroupTopicPartition)
		for k, oc := range have {
			byTopic[k.topic] = append(byTopic[k.topic], part(k.topic, k.partition, oc))
		}
		names := make([]string, 0, len(byTopic))
		for t := range byTopic {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			st := kmsg.NewOffsetFetchResponseGroupTopic()
			st.Topic = t
			st.Partitions = byTopic[t]
			sort.Slice(st.Partitions, func(i, j int) bool { return st.Partitions[i].Partition < st.Partitions[j].Partition })
			rg.Topics = append(rg.Topics, st)
		}
		return rg
	}
	for _, t := range topics {
		st := kmsg.NewOffsetFetchResponseGroupTopic()
		st.Topic = t.Topic
		st.TopicID = t.TopicID
		for _, p := range t.Partitions {
			if t.Topic == "" {
				sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				sp.Partition = p
				sp.Offset, sp.LeaderEpoch = -1, -1
				sp.ErrorCode = kerr.UnknownTopicID.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if oc, ok := have[tp{t.Topic, p}]; ok || unstable(t.Topic, p) {
				st.Partitions = append(st.Partitions, part(t.Topic, p, oc))
				continue
			}
			sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			sp.Partition = p
			sp.Offset, sp.LeaderEpoch = -1, -1
			sp.Metadata = kmsg.StringPtr("")
			if m.cfg.FallbackOffset != nil {
				off, ok, err := m.cfg.FallbackOffset(ctx, id, group, t.Topic, p)
				switch {
				case err != nil:
					sp.ErrorCode = errCode(err)
				case ok:
					sp.Offset = off
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		rg.Topics = append(rg.Topics, st)
	}
	return rg
}

// subscribedTopics is the union of the topics the members subscribe to, read from their
// consumer-protocol metadata of the selected protocol (every protocol while none is selected).
func (g *group) subscribedTopics() map[string]bool {
	sub := make(map[string]bool)
	for _, mem := range g.members {
		for _, p := range mem.rec.Protocols {
			if g.protocol != "" && p.Name != g.protocol {
				continue
			}
			var meta kmsg.ConsumerMemberMetadata
			if meta.ReadFrom(p.Metadata) != nil {
				continue
			}
			for _, t := range meta.Topics {
				sub[t] = true
			}
		}
	}
	return sub
}

// DeleteOffsets serves one OffsetDelete: the offsets of an empty group, or of topics no member
// of a consumer group subscribes to, are journaled as deleted and dropped.
func (m *Manager) DeleteOffsets(ctx context.Context, id kafka.Identity, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	m.mu.Lock()
	g := m.groups[req.Group]
	switch {
	case m.closed:
		resp.ErrorCode = kerr.NotCoordinator.Code
	case g == nil || g.state == stDead:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
	case g.state != stEmpty && g.protocolType != "consumer":
		resp.ErrorCode = kerr.NonEmptyGroup.Code
	}
	if resp.ErrorCode != 0 {
		m.mu.Unlock()
		return resp
	}
	var sub map[string]bool
	switch {
	case g.cg != nil:
		sub = g.cg.SubscribedTopics()
	case g.state != stEmpty:
		sub = g.subscribedTopics()
	}
	var recs []record.Record
	var gone []tp
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if sub[t.Topic] {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else if _, ok := g.offsets[tp{t.Topic, p.Partition}]; ok {
				gone = append(gone, tp{t.Topic, p.Partition})
				recs = append(recs, record.Record{Type: record.TypeOffsetDeleted,
					OffsetDeleted: &record.OffsetDeleted{Group: g.name, Topic: t.Topic, Partition: p.Partition}})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(recs) == 0 {
		m.mu.Unlock()
		return resp
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		resp.Topics = nil
		resp.ErrorCode = code
		return resp
	}
	for _, k := range gone {
		delete(g.offsets, k)
	}
	return resp
}

// DropTopics journals as deleted, then forgets, every committed offset of a topic for which gone
// is true, in every group whatever its state: Kafka removes a deleted topic's offsets from every
// group, so a consumer of a recreated topic of the same name does not resume at a stale offset.
// Each group's offsets are collected once its earlier appends are done, so a commit in flight is
// not missed. It stops at the first failed append and returns it; the rest are kept for the next
// call.
func (m *Manager) DropTopics(ctx context.Context, gone func(topic string) bool) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	var names []string
	for _, name := range sortedNames(m.groups) {
		for k := range m.groups[name].offsets {
			if gone(k.topic) {
				names = append(names, name)
				break
			}
		}
	}
	m.mu.Unlock()
	for _, name := range names {
		if err := m.dropTopicsOf(ctx, name, gone); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) dropTopicsOf(ctx context.Context, name string, gone func(topic string) bool) error {
	m.mu.Lock()
	g := m.groups[name]
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	if g == nil {
		m.mu.Unlock()
		return nil
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	<-wait
	m.mu.Lock()
	if m.groups[name] != g {
		m.mu.Unlock()
		return nil
	}
	var keys []tp
	for k := range g.offsets {
		if gone(k.topic) {
			keys = append(keys, k)
		}
	}
	m.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	recs := make([]record.Record, len(keys))
	for i, k := range keys {
		recs[i] = record.Record{Type: record.TypeOffsetDeleted,
			OffsetDeleted: &record.OffsetDeleted{Group: name, Topic: k.topic, Partition: k.partition}}
	}
	ready := make(chan struct{})
	close(ready)
	err := m.append(ready, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.journalCode(err)
		return err
	}
	for _, k := range keys {
		delete(g.offsets, k)
	}
	return nil
}

// groupOrNew is the group named name, created Empty now when the manager holds none (a commit
// to a group nobody joined keeps its offsets in a group of its own, as Kafka does). m.mu is held.
func (m *Manager) groupOrNew(name string) *group {
	g := m.groups[name]
	if g == nil {
		g = newGroup(name)
		g.emptySince = m.clk.Now()
		m.groups[name] = g
	}
	return g
}
