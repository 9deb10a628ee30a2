package livegroups

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// Difference is one way the live fleet disagrees with a replay. JSON field names are an
// interface.
type Difference struct {
	Group string `json:"group"`
	// What names the field: "group", "state", "protocol_type", "protocol", "member <id>",
	// "offset <topic>[<partition>]".
	What string `json:"what"`
	Log  string `json:"log"`
	Live string `json:"live"`
}

func (Difference) Columns() []string { return []string{"GROUP", "WHAT", "LOG", "LIVE"} }

func (d Difference) Cells() []string { return []string{d.Group, d.What, d.Log, d.Live} }

// LiveGroups is what DiffLive asks the fleet; *kadm.Client has it.
type LiveGroups interface {
	ListGroups(ctx context.Context, filterStates ...string) (kadm.ListedGroups, error)
	DescribeGroups(ctx context.Context, groups ...string) (kadm.DescribedGroups, error)
	DescribeConsumerGroups(ctx context.Context, groups ...string) (kadm.DescribedConsumerGroups, error)
	FetchOffsets(ctx context.Context, group string) (kadm.OffsetResponses, error)
}

// DiffLive compares the groups the log holds in a partition with what the gateways answer for
// the partition's groups (DescribeGroups, ConsumerGroupDescribe for KIP-848 consumer groups, and
// OffsetFetch go to each group's coordinator), and lists every difference.
func DiffLive(ctx context.Context, adm LiveGroups, partition int, groups []stateview.GroupView) ([]Difference, error) {
	names := map[string]bool{}
	for _, g := range groups {
		names[g.Group] = true
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		if !answered(err) {
			return nil, fmt.Errorf("%w: list groups: %w", ErrNoGateway, err)
		}
		return nil, fmt.Errorf("list groups: %w", err)
	}
	for name := range listed {
		if record.Partition(name) == partition {
			names[name] = true
		}
	}
	byName := map[string]stateview.GroupView{}
	for _, g := range groups {
		byName[g.Group] = g
	}
	var classic, consumer []string
	for n := range names {
		if byName[n].Type == "consumer" || listed[n].GroupType == "consumer" {
			consumer = append(consumer, n)
		} else {
			classic = append(classic, n)
		}
	}
	slices.Sort(classic)
	slices.Sort(consumer)
	var described kadm.DescribedGroups
	if len(classic) > 0 {
		if described, err = adm.DescribeGroups(ctx, classic...); err != nil {
			return nil, fmt.Errorf("describe groups: %w", err)
		}
	}
	var cdescribed kadm.DescribedConsumerGroups
	if len(consumer) > 0 {
		if cdescribed, err = adm.DescribeConsumerGroups(ctx, consumer...); err != nil {
			return nil, fmt.Errorf("describe consumer groups: %w", err)
		}
	}
	var diffs []Difference
	for _, name := range append(classic, consumer...) {
		offs, err := adm.FetchOffsets(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("fetch offsets of group %q: %w", name, err)
		}
		if err := offs.Error(); err != nil {
			return nil, fmt.Errorf("fetch offsets of group %q: %w", name, err)
		}
		inLog := names[name] && hasGroup(groups, name)
		if d, ok := cdescribed[name]; ok {
			if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
				return nil, fmt.Errorf("describe consumer group %q: %w", name, d.Err)
			}
			diffs = append(diffs, compareConsumerGroup(name, byName[name], inLog, d, offs)...)
			continue
		}
		d := described[name]
		if d.Err != nil {
			return nil, fmt.Errorf("describe group %q: %w", name, d.Err)
		}
		diffs = append(diffs, compareGroup(name, byName[name], inLog, d, offs)...)
	}
	slices.SortStableFunc(diffs, func(a, b Difference) int { return strings.Compare(a.Group, b.Group) })
	return diffs, nil
}

// compareConsumerGroup lists the differences of one KIP-848 consumer group: state, epochs,
// assignor, every member's epoch and assignments, and the offsets.
func compareConsumerGroup(name string, g stateview.GroupView, inLog bool, d kadm.DescribedConsumerGroup, offs kadm.OffsetResponses) []Difference {
	var out []Difference
	add := func(what, log, live string) {
		if log != live {
			out = append(out, Difference{Group: name, What: what, Log: log, Live: live})
		}
	}
	liveExists := d.Err == nil && d.State != "" && d.State != "Dead"
	switch {
	case !inLog:
		if liveExists || len(offs) > 0 {
			add("group", "", "exists ("+d.State+")")
		}
		return out
	case !liveExists && len(offs) == 0:
		add("group", "exists ("+g.State+")", "")
		return out
	}
	add("type", g.Type, "consumer")
	add("state", g.State, d.State)
	if c := g.Consumer; c != nil {
		add("epoch", strconv.Itoa(int(c.Epoch)), strconv.Itoa(int(d.Epoch)))
		add("assignment_epoch", strconv.Itoa(int(c.AssignmentEpoch)), strconv.Itoa(int(d.AssignmentEpoch)))
		add("assignor", c.Assignor, d.AssignorName)
		live := map[string]kadm.ConsumerGroupMember{}
		for _, m := range d.Members {
			live[m.MemberID] = m
		}
		for _, m := range c.Members {
			logText := consumerMemberText(m.Epoch, m.Assigned, m.Target)
			lm, ok := live[m.MemberID]
			if !ok {
				add("member "+m.MemberID, logText, "")
				continue
			}
			add("member "+m.MemberID, logText, consumerMemberText(lm.MemberEpoch, setText(lm.Assignment), setText(lm.TargetAssignment)))
			delete(live, m.MemberID)
		}
		for id, lm := range live {
			add("member "+id, "", consumerMemberText(lm.MemberEpoch, setText(lm.Assignment), setText(lm.TargetAssignment)))
		}
	}
	out = append(out, compareOffsets(name, g, offs)...)
	slices.SortStableFunc(out, func(a, b Difference) int { return strings.Compare(a.What, b.What) })
	return out
}

func consumerMemberText(epoch int32, assigned, target string) string {
	return "epoch " + strconv.Itoa(int(epoch)) + " assigned " + assigned + " target " + target
}

// setText is a described assignment as PartitionsText writes one.
func setText(s kadm.TopicsSet) string {
	var parts []string
	s.EachPartitions(func(t string, ps []int32) {
		ps = slices.Clone(ps)
		slices.Sort(ps)
		txt := make([]string, len(ps))
		for i, p := range ps {
			txt[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+"["+strings.Join(txt, ",")+"]")
	})
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func hasGroup(groups []stateview.GroupView, name string) bool {
	return slices.ContainsFunc(groups, func(g stateview.GroupView) bool { return g.Group == name })
}

// compareGroup lists the differences of one group; inLog is false for a group only the fleet
// knows.
func compareGroup(name string, g stateview.GroupView, inLog bool, d kadm.DescribedGroup, offs kadm.OffsetResponses) []Difference {
	var out []Difference
	add := func(what, log, live string) {
		if log != live {
			out = append(out, Difference{Group: name, What: what, Log: log, Live: live})
		}
	}
	liveExists := d.State != "" && d.State != "Dead"
	if !inLog {
		if liveExists || len(offs) > 0 {
			add("group", "", "exists ("+d.State+")")
		}
		return out
	}
	if !liveExists && len(offs) == 0 {
		add("group", "exists ("+g.State+")", "")
		return out
	}
	add("state", g.State, d.State)
	add("protocol_type", g.ProtocolType, d.ProtocolType)
	add("protocol", g.Protocol, d.Protocol)
	live := map[string]kadm.DescribedGroupMember{}
	for _, m := range d.Members {
		live[m.MemberID] = m
	}
	for _, m := range g.Members {
		lm, ok := live[m.MemberID]
		if !ok {
			add("member "+m.MemberID, memberText(m.InstanceID, m.ClientID, m.ClientHost), "")
			continue
		}
		inst := ""
		if lm.InstanceID != nil {
			inst = *lm.InstanceID
		}
		add("member "+m.MemberID, memberText(m.InstanceID, m.ClientID, m.ClientHost), memberText(inst, lm.ClientID, lm.ClientHost))
		delete(live, m.MemberID)
	}
	for id, lm := range live {
		inst := ""
		if lm.InstanceID != nil {
			inst = *lm.InstanceID
		}
		add("member "+id, "", memberText(inst, lm.ClientID, lm.ClientHost))
	}
	out = append(out, compareOffsets(name, g, offs)...)
	slices.SortStableFunc(out, func(a, b Difference) int {
		if a.What < b.What {
			return -1
		}
		if a.What > b.What {
			return 1
		}
		return 0
	})
	return out
}

// compareOffsets lists the differences between a group's offsets in the log and the live ones.
func compareOffsets(name string, g stateview.GroupView, offs kadm.OffsetResponses) []Difference {
	var out []Difference
	add := func(what, log, live string) {
		if log != live {
			out = append(out, Difference{Group: name, What: what, Log: log, Live: live})
		}
	}
	seen := map[string]bool{}
	for _, o := range g.Offsets {
		key := o.Topic + "[" + strconv.Itoa(int(o.Partition)) + "]"
		seen[key] = true
		lo, ok := offs.Lookup(o.Topic, o.Partition)
		liveText := ""
		if ok && lo.At >= 0 {
			liveText = offsetText(lo.At, lo.LeaderEpoch, lo.Metadata)
		}
		add("offset "+key, offsetText(o.Offset, o.LeaderEpoch, o.Metadata), liveText)
	}
	offs.Each(func(lo kadm.OffsetResponse) {
		key := lo.Topic + "[" + strconv.Itoa(int(lo.Partition)) + "]"
		if !seen[key] && lo.At >= 0 {
			add("offset "+key, "", offsetText(lo.At, lo.LeaderEpoch, lo.Metadata))
		}
	})
	return out
}

func memberText(instance, client, host string) string {
	s := "client " + client + " host " + host
	if instance != "" {
		s = "instance " + instance + " " + s
	}
	return s
}

func offsetText(at int64, epoch int32, meta string) string {
	s := strconv.FormatInt(at, 10) + " epoch " + strconv.Itoa(int(epoch))
	if meta != "" {
		s += " metadata " + strconv.Quote(meta)
	}
	return s
}

// GroupLive is what DescribeGroup asks the fleet; KafkaLive has it.
type GroupLive interface {
	FindGroupCoordinators(ctx context.Context, groups ...string) kadm.FindCoordinatorResponses
	// Lag is kadm's: DescribeGroups, OffsetFetch and ListOffsets joined per partition.
	Lag(ctx context.Context, groups ...string) (kadm.DescribedGroupLags, error)
	// RecordTimes returns the timestamp of the first record at or after each offset (topic ->
	// partition -> offset); a partition without one is left out.
	RecordTimes(ctx context.Context, at map[string]map[int32]int64) (map[string]map[int32]time.Time, error)
}

// GroupLog is the log's side of DescribeGroup: the --group row given FindCoordinator's answer
// (Model.CoordinatorOf) and the group as the log holds it (nil when it holds none).
type GroupLog func(group string, fcNode int32, fcAddr string, fcErr error) (claims.GroupCoordinator, *stateview.GroupView, error)

// ModelLog is DescribeGroup's view of a loaded model.
func ModelLog(f *claims.Model) GroupLog {
	return func(group string, node int32, addr string, fcErr error) (claims.GroupCoordinator, *stateview.GroupView, error) {
		return f.CoordinatorOf(group, node, addr, fcErr), f.GroupView(group), nil
	}
}

// ErrNoGateway matches a DescribeGroup that no gateway answered: the fleet was not reached,
// which is not the same as a gateway answering with an error code.
var ErrNoGateway = errors.New("no gateway answered")

// GroupDetail is `claims --group G` and the console's group page: where the log puts the group
// and what FindCoordinator says (the GroupCoordinator fields), then what the group's
// coordinator answers (state, protocol, members) and, per partition, the committed offset, the
// log end, the lag in records and in time. JSON field names are an interface.
type GroupDetail struct {
	claims.GroupCoordinator
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	// Generation is the generation of the group's newest snapshot in the log (DescribeGroups
	// does not say it); nil when the log holds no snapshot.
	Generation *int32        `json:"generation"`
	Members    []GroupMember `json:"members"`
	Lag        []GroupLag    `json:"lag"`
	// DescribeError is the error code the coordinator answered DescribeGroups or OffsetFetch
	// with, if any.
	DescribeError string `json:"describe_error,omitempty"`
}

// GroupMember is one member as the group's coordinator describes it. JSON field names are an
// interface.
type GroupMember struct {
	MemberID   string `json:"member_id"`
	InstanceID string `json:"instance_id,omitempty"`
	ClientID   string `json:"client_id"`
	ClientHost string `json:"client_host"`
	// Assignment is "topic[0,1] other[2]" for the consumer protocol.
	Assignment string `json:"assignment"`
}

func (GroupMember) Columns() []string {
	return []string{"MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"}
}

func (m GroupMember) Cells() []string {
	return []string{m.MemberID, m.InstanceID, m.ClientID, m.ClientHost, m.Assignment}
}

// GroupLag is one partition a group commits to or is assigned. JSON field names are an
// interface.
type GroupLag struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the group's committed offset, nil when it has none.
	Committed *int64 `json:"committed_offset"`
	// LogEnd is the partition's end offset (high watermark), nil when it could not be listed.
	LogEnd *int64 `json:"log_end_offset"`
	// Lag is LogEnd - Committed in records (from the start offset without a commit).
	Lag *int64 `json:"lag"`
	// LagSeconds is the age of the oldest unread record (at the commit, or at the log start
	// without one; 0 without lag), nil when unknown.
	LagSeconds *float64 `json:"lag_seconds"`
	// MemberID and ClientID name the member assigned the partition, "" when none is.
	MemberID string `json:"member_id"`
	ClientID string `json:"client_id"`
	Error    string `json:"error,omitempty"`
}

func (GroupLag) Columns() []string {
	return []string{"TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "LAG-TIME", "CLIENT-ID", "MEMBER-ID"}
}

func (l GroupLag) Cells() []string {
	lagTime := ""
	if l.LagSeconds != nil {
		lagTime = output.Seconds(*l.LagSeconds)
	}
	return []string{l.Topic, strconv.Itoa(int(l.Partition)), output.IntText(l.Committed), output.IntText(l.LogEnd), output.IntText(l.Lag), lagTime, l.ClientID, l.MemberID}
}

// answered reports whether err is a gateway's answer (a Kafka error code) rather than a failure
// to reach one.
func answered(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

// DescribeGroup asks the fleet about group (FindCoordinator, then kadm's Lag and the records at
// the committed offsets) and joins the answers with the log. It fails, matching ErrNoGateway,
// when no gateway answers; an error code a gateway answers is part of the result.
func DescribeGroup(ctx context.Context, live GroupLive, fromLog GroupLog, group string, now time.Time) (GroupDetail, error) {
	var (
		node  int32
		addr  string
		fcErr error
	)
	switch r, ok := live.FindGroupCoordinators(ctx, group)[group]; {
	case !ok:
		fcErr = errors.New("no answer to FindCoordinator")
	case r.Err != nil:
		fcErr = r.Err
	default:
		node, addr = r.NodeID, net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port)))
	}
	if fcErr != nil && !answered(fcErr) {
		return GroupDetail{}, fmt.Errorf("%w: FindCoordinator: %w", ErrNoGateway, fcErr)
	}
	gc, gv, err := fromLog(group, node, addr, fcErr)
	if err != nil {
		return GroupDetail{}, err
	}
	d := GroupDetail{GroupCoordinator: gc, Members: []GroupMember{}, Lag: []GroupLag{}}
	if gv != nil {
		gen := gv.Generation
		d.Generation = &gen
	}
	if fcErr != nil {
		return d, nil
	}
	lags, err := live.Lag(ctx, group)
	if err != nil {
		if !answered(err) {
			return GroupDetail{}, fmt.Errorf("%w: describe group %q: %w", ErrNoGateway, group, err)
		}
		d.DescribeError = err.Error()
		return d, nil
	}
	l := lags[group]
	if err := l.Error(); err != nil {
		if !answered(err) {
			return GroupDetail{}, fmt.Errorf("%w: describe group %q: %w", ErrNoGateway, group, err)
		}
		d.DescribeError = err.Error()
	}
	d.State, d.ProtocolType, d.Protocol = l.State, l.ProtocolType, l.Protocol
	for _, m := range l.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: assignedText(m)}
		if m.InstanceID != nil {
			gm.InstanceID = *m.InstanceID
		}
		d.Members = append(d.Members, gm)
	}
	want := map[string]map[int32]int64{}
	for _, pl := range l.Lag.Sorted() {
		row := GroupLag{Topic: pl.Topic, Partition: pl.Partition}
		if pl.Commit.At >= 0 {
			at := pl.Commit.At
			row.Committed = &at
		}
		if pl.End.Err == nil {
			end := pl.End.Offset
			row.LogEnd = &end
		}
		if pl.Lag >= 0 {
			lag := pl.Lag
			row.Lag = &lag
			// The oldest unread record is at the commit, or without one where the group
			// would start reading: the log start, from which kadm counts the lag then.
			from := pl.Start.Offset
			if row.Committed != nil {
				from = *row.Committed
			}
			switch {
			case lag == 0:
				zero := 0.0
				row.LagSeconds = &zero
			case row.Committed != nil || pl.Start.Err == nil:
				if want[pl.Topic] == nil {
					want[pl.Topic] = map[int32]int64{}
				}
				want[pl.Topic][pl.Partition] = from
			}
		}
		if pl.Member != nil {
			row.MemberID, row.ClientID = pl.Member.MemberID, pl.Member.ClientID
		}
		if pl.Err != nil {
			row.Error = pl.Err.Error()
		}
		d.Lag = append(d.Lag, row)
	}
	if len(want) > 0 {
		// The lag in time is worth a try, not a failure: without an answer the column stays empty.
		rctx, cancel := context.WithTimeout(ctx, recordTimesBudget)
		times, err := live.RecordTimes(rctx, want)
		cancel()
		if err == nil {
			for i := range d.Lag {
				r := &d.Lag[i]
				if ts, ok := times[r.Topic][r.Partition]; ok && r.LagSeconds == nil {
					age := max(0, now.Sub(ts).Seconds())
					r.LagSeconds = &age
				}
			}
		}
	}
	return d, nil
}

func assignedText(m kadm.DescribedGroupMember) string {
	c, ok := m.Assigned.AsConsumer()
	if !ok {
		return ""
	}
	var parts []string
	for _, t := range c.Topics {
		ps := make([]string, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t.Topic+"["+strings.Join(ps, ",")+"]")
	}
	return strings.Join(parts, " ")
}

// recordTimesBudget bounds the reads of the records at the committed offsets.
const recordTimesBudget = 2 * time.Second

// KafkaLive is GroupLive over the gateways: Admin answers the admin requests, and a short-lived
// consumer built from Opts (the admin client's connection options) reads the records at the
// committed offsets, never joining a group or committing.
type KafkaLive struct {
	Admin *kadm.Client
	Opts  []kgo.Opt
}

func (k KafkaLive) FindGroupCoordinators(ctx context.Context, groups ...string) kadm.FindCoordinatorResponses {
	return k.Admin.FindGroupCoordinators(ctx, groups...)
}

func (k KafkaLive) Lag(ctx context.Context, groups ...string) (kadm.DescribedGroupLags, error) {
	return k.Admin.Lag(ctx, groups...)
}

// RecordTimes reads one fetch's worth from each offset until every partition gave its first
// record or ctx ends.
func (k KafkaLive) RecordTimes(ctx context.Context, at map[string]map[int32]int64) (map[string]map[int32]time.Time, error) {
	parts := map[string]map[int32]kgo.Offset{}
	want := 0
	for t, ps := range at {
		parts[t] = map[int32]kgo.Offset{}
		for p, off := range ps {
			parts[t][p] = kgo.NewOffset().At(off)
			want++
		}
	}
	opts := append(slices.Clone(k.Opts), kgo.ConsumePartitions(parts), kgo.FetchMaxWait(100*time.Millisecond), kgo.FetchMaxPartitionBytes(64<<10))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := map[string]map[int32]time.Time{}
	got := 0
	for got < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if out[r.Topic] == nil {
				out[r.Topic] = map[int32]time.Time{}
			}
			if _, ok := out[r.Topic][r.Partition]; !ok && r.Offset >= at[r.Topic][r.Partition] {
				out[r.Topic][r.Partition] = r.Timestamp
				got++
			}
		})
	}
	return out, nil
}
