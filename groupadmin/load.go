package groupadmin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
)

// Topics is a seek's choice of partitions: a topic with all its partitions (Partitions nil), or
// some of them.
type Topics struct {
	Topic      string
	Partitions []int32
}

// ParseTopics reads --topic values: "T" for every partition of T, "T:P,P,..." for some.
func ParseTopics(values []string) ([]Topics, error) {
	var out []Topics
	for _, v := range values {
		name, parts, has := strings.Cut(v, ":")
		if name == "" {
			return nil, fmt.Errorf("topic %q has no name: want T, or T:P,P for some of its partitions", v)
		}
		t := Topics{Topic: name}
		if has {
			for p := range strings.SplitSeq(parts, ",") {
				n, err := strconv.ParseInt(p, 10, 32)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("topic %q: partition %q is not a partition number: want T, or T:P,P for some of its partitions", v, p)
				}
				if !slices.Contains(t.Partitions, int32(n)) {
					t.Partitions = append(t.Partitions, int32(n))
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// ErrUnknownGroup is a seek of a group no gateway knows and that has no committed offset.
var ErrUnknownGroup = errors.New("unknown group")

// ErrUnknownTopic is a seek over a topic, or a partition, that does not exist.
var ErrUnknownTopic = errors.New("unknown topic or partition")

// MembersError refuses a seek of a group with live members, as Kafka does: an admin's commit
// (generation -1, no member id) to a group that has members fails.
type MembersError struct {
	Group   string
	Members []Member
}

// Member is a live member of a group a seek was refused for.
type Member struct {
	ID, ClientID, ClientHost string
}

func (e *MembersError) Error() string {
	names := make([]string, len(e.Members))
	for i, m := range e.Members {
		names[i] = m.ID + " (client " + m.ClientID + " on " + m.ClientHost + ")"
	}
	return fmt.Sprintf("group %s has %d live member(s): %s; Kafka moves the offsets of a group without members only: stop its consumers first",
		e.Group, len(e.Members), strings.Join(names, ", "))
}

// noGateway marks a failure to reach the gateways (not an error code one answered) with
// livegroups.ErrNoGateway, so that the command says what each address answers.
func noGateway(what string, err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if ke.Retriable {
			return fmt.Errorf("%s: %w (the gateways are handing the group's coordinator over or starting: try again in a moment)", what, err)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%w: %s: %w", livegroups.ErrNoGateway, what, err)
}

// Load asks the gateways for what a seek of group to target needs (the group's state and
// members, its committed offsets, each partition's start and end, and for a Time target the
// offsets at that time) and builds the plan. It refuses an unknown group, an unknown topic or
// partition, and a group with live members.
func Load(ctx context.Context, adm *kadm.Client, group string, target Target, only []Topics) (Plan, error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return Plan{}, noGateway("describe group "+group, err)
	}
	d, ok := described[group]
	known := ok && d.Err == nil && d.State != "Dead"
	if ok && d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
		return Plan{}, fmt.Errorf("describe group %s: %w", group, d.Err)
	}
	members := make([]Member, 0, len(d.Members))
	for _, m := range d.Members {
		members = append(members, Member{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
	}
	if len(members) == 0 {
		// A KIP-848 consumer group's members are described by ConsumerGroupDescribe.
		if cd, err := adm.DescribeConsumerGroups(ctx, group); err == nil {
			if c, ok := cd[group]; ok && c.Err == nil && c.State != "" && c.State != "Dead" {
				known = true
				for _, m := range c.Members {
					members = append(members, Member{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
				}
			}
		}
	}
	if len(members) > 0 {
		return Plan{}, &MembersError{Group: group, Members: members}
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return Plan{}, noGateway("fetch the offsets of group "+group, err)
	}
	if err := offs.Error(); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return Plan{}, fmt.Errorf("fetch the offsets of group %s: %w", group, err)
	}
	committed := map[string]map[int32]kadm.OffsetResponse{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		if committed[o.Topic] == nil {
			committed[o.Topic] = map[int32]kadm.OffsetResponse{}
		}
		committed[o.Topic][o.Partition] = o
	})
	if !known && len(committed) == 0 {
		return Plan{}, fmt.Errorf("%w: no gateway knows group %s and it has no committed offsets ('%s group list' lists the groups)", ErrUnknownGroup, group, program)
	}
	if len(only) == 0 {
		from := committed
		if target.Kind == CommitAt || target.Kind == Undo {
			from = nil
			for t := range target.Commits {
				only = append(only, Topics{Topic: t})
			}
			slices.SortFunc(only, func(a, b Topics) int { return strings.Compare(a.Topic, b.Topic) })
		}
		for _, t := range slices.Sorted(maps.Keys(from)) {
			only = append(only, Topics{Topic: t})
		}
	}
	if len(only) == 0 {
		return Plan{}, fmt.Errorf("group %s has no committed offsets: name the topics to seek with --topic", group)
	}
	topics := make([]string, len(only))
	for i, t := range only {
		topics[i] = t.Topic
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return Plan{}, noGateway("list the start offsets", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return Plan{}, noGateway("list the end offsets", err)
	}
	var at kadm.ListedOffsets
	if target.Kind == Time {
		if at, err = adm.ListOffsetsAfterMilli(ctx, target.Time.UnixMilli(), topics...); err != nil {
			return Plan{}, noGateway("list the offsets at "+target.String(), err)
		}
	}
	var parts []Partition
	for _, sel := range only {
		ps := ends[sel.Topic]
		if bad, ok := ps[-1]; ok && bad.Err != nil || len(ps) == 0 {
			return Plan{}, fmt.Errorf("%w: topic %s does not exist", ErrUnknownTopic, sel.Topic)
		}
		want := sel.Partitions
		if want == nil {
			want = slices.Sorted(maps.Keys(ps))
		}
		for _, p := range want {
			end, ok := ps[p]
			if !ok {
				return Plan{}, fmt.Errorf("%w: topic %s has no partition %d (it has %d)", ErrUnknownTopic, sel.Topic, p, len(ps))
			}
			if _, had := target.Commits[sel.Topic][p]; (target.Kind == CommitAt || target.Kind == Undo) && !had {
				continue
			}
			start, sok := starts.Lookup(sel.Topic, p)
			if end.Err != nil || !sok || start.Err != nil {
				return Plan{}, fmt.Errorf("list the offsets of %s[%d]: %w", sel.Topic, p, errors.Join(end.Err, start.Err))
			}
			pt := Partition{Topic: sel.Topic, Partition: p, Committed: -1, Start: start.Offset, End: end.Offset}
			if c, ok := committed[sel.Topic][p]; ok {
				pt.Committed, pt.Metadata = c.At, c.Metadata
			}
			if target.Kind == Time {
				o, ok := at.Lookup(sel.Topic, p)
				if !ok || o.Err != nil {
					return Plan{}, fmt.Errorf("list the offset of %s[%d] at %s: %v", sel.Topic, p, target.Time.UTC().Format("2006-01-02T15:04:05Z07:00"), o.Err)
				}
				pt.AtTime = o.Offset
				if pt.AtTime < 0 {
					pt.AtTime = end.Offset
				}
			}
			parts = append(parts, pt)
		}
	}
	if len(parts) == 0 {
		return Plan{}, fmt.Errorf("group %s has nothing to move on these partitions to %s", group, target)
	}
	return BuildPlan(group, target, parts), nil
}

// CommitsAt returns the offsets group had committed at t, as the coordinator log's history
// holds them: its log partition folded (replay.Run, the gateways' fold) from the start
// through the last record written at or before t (the writers' clocks).
func CommitsAt(ctx context.Context, log *logread.Log, group string, t time.Time) (map[string]map[int32]int64, error) {
	r, err := replay.Run(ctx, log, record.Partition(group), replay.Options{Until: logread.Position{Time: t}})
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]int64{}
	for _, g := range r.Groups {
		if g.Group != group {
			continue
		}
		for _, o := range g.Offsets {
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]int64{}
			}
			out[o.Topic][o.Partition] = o.Offset
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the coordinator log holds no committed offset of group %s at %s", ErrUnknownGroup, group, t.UTC().Format(time.RFC3339))
	}
	return out, nil
}

// program is the binary's name, in the sentences that tell operators what to run.
const program = "iggy-kafka"

// ErrMemberJoined is a commit the group's coordinator refused because a member joined the group
// after the plan was made.
var ErrMemberJoined = errors.New("a member joined the group")

// Commit writes the plan's new offsets as one OffsetCommit of an admin (generation -1, no member
// id) to the group's coordinator, which takes all of them or none, each with the metadata that
// marks the seek (SeekMark) or the undo (UndoMark). A group that gained a member since the plan
// makes the coordinator refuse it (ErrMemberJoined).
func Commit(ctx context.Context, adm *kadm.Client, p Plan, now time.Time) error {
	meta := metadata(p, now)
	var os kadm.Offsets
	for _, s := range p.Steps {
		os.Add(kadm.Offset{Topic: s.Topic, Partition: s.Partition, At: s.New, LeaderEpoch: -1, Metadata: meta})
	}
	resp, err := adm.CommitOffsets(ctx, p.Group, os)
	if err != nil {
		return noGateway("commit the offsets of group "+p.Group, err)
	}
	if err := resp.Error(); err != nil {
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.RebalanceInProgress) {
			return fmt.Errorf("%w %s since the plan was made, so its coordinator refused the commit (%v): nothing was moved", ErrMemberJoined, p.Group, err)
		}
		return fmt.Errorf("commit the offsets of group %s: %w", p.Group, err)
	}
	return nil
}
