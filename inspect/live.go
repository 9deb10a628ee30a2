package inspect

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"

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
	FetchOffsets(ctx context.Context, group string) (kadm.OffsetResponses, error)
}

// DiffLive compares a replay with what the gateways answer for the partition's groups
// (DescribeGroups and OffsetFetch go to each group's coordinator), and lists every difference.
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
	all := make([]string, 0, len(names))
	for n := range names {
		all = append(all, n)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return nil, nil
	}
	described, err := adm.DescribeGroups(ctx, all...)
	if err != nil {
		return nil, fmt.Errorf("describe groups: %w", err)
	}
	byName := map[string]GroupView{}
	for _, g := range r.Groups {
		byName[g.Group] = g
	}
	var diffs []Difference
	for _, name := range all {
		d := described[name]
		if d.Err != nil {
			return nil, fmt.Errorf("describe group %q: %w", name, d.Err)
		}
		offs, err := adm.FetchOffsets(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("fetch offsets of group %q: %w", name, err)
		}
		if err := offs.Error(); err != nil {
			return nil, fmt.Errorf("fetch offsets of group %q: %w", name, err)
		}
		diffs = append(diffs, compareGroup(name, byName[name], names[name] && hasGroup(r, name), d, offs)...)
	}
	return diffs, nil
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
