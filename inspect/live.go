package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
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

// DiffLive compares a replay with what the gateways answer for the partition's groups
// (DescribeGroups, ConsumerGroupDescribe for KIP-848 consumer groups, and OffsetFetch go to each
// group's coordinator), and lists every difference.
func DiffLive(ctx context.Context, adm LiveGroups, r *Replay) ([]Difference, error) {
	names := map[string]bool{}
	for _, g := range r.Groups {
		names[g.Group] = true
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	for name := range listed {
		if record.Partition(name) == r.Partition {
			names[name] = true
		}
	}
	byName := map[string]GroupView{}
	for _, g := range r.Groups {
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
		inLog := names[name] && hasGroup(r, name)
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
func compareConsumerGroup(name string, g GroupView, inLog bool, d kadm.DescribedConsumerGroup, offs kadm.OffsetResponses) []Difference {
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

func hasGroup(r *Replay, name string) bool {
	return slices.ContainsFunc(r.Groups, func(g GroupView) bool { return g.Group == name })
}

// compareGroup lists the differences of one group; inLog is false for a group only the fleet
// knows.
func compareGroup(name string, g GroupView, inLog bool, d kadm.DescribedGroup, offs kadm.OffsetResponses) []Difference {
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
func compareOffsets(name string, g GroupView, offs kadm.OffsetResponses) []Difference {
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
