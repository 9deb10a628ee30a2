package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// Replay lays a replay out as text: a summary, then groups, members and offsets.
type Replay struct{ *replay.Result }

// MarshalJSON is the result's own JSON.
func (d Replay) MarshalJSON() ([]byte, error) { return json.Marshal(d.Result) }

// Text prints the summary, then the groups, members and offsets as three tables, and a fourth of
// the consumer groups' members when the partition has KIP-848 consumer groups (for those, the
// groups table shows the group epoch as GENERATION and the assignor as PROTOCOL).
func (d Replay) Text(w io.Writer) error {
	r := d.Result
	through := "-"
	if r.Through != nil {
		through = strconv.FormatUint(*r.Through, 10)
	}
	claim := "no claim"
	if r.Claim != nil {
		claim = fmt.Sprintf("claim %d by node %d (%s) at offset %d", r.Claim.Number, r.Claim.Node, r.Claim.Addr, r.Claim.Offset)
	}
	fmt.Fprintf(w, "partition %d: offsets %d..%s, %d records (%d void), %s\n", r.Partition, r.From, through, r.Records, r.Void, claim)
	fmt.Fprintf(w, "replayed in %s (%s records/s)\n\n", time.Duration(r.Seconds*float64(time.Second)).Round(time.Microsecond), strconv.FormatFloat(r.Rate, 'f', 0, 64))
	g := output.NewTable([]string{"GROUP", "STATE", "GENERATION", "PROTOCOL-TYPE", "PROTOCOL", "LEADER", "MEMBERS", "OFFSETS"})
	m := output.NewTable([]string{"GROUP", "MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "CLIENT-HOST", "ASSIGNMENT"})
	o := output.NewTable([]string{"GROUP", "TOPIC", "PARTITION", "OFFSET", "LEADER-EPOCH", "METADATA"})
	for _, v := range r.Groups {
		g.Add([]string{v.Group, v.State, strconv.Itoa(int(v.Generation)), v.ProtocolType, v.Protocol, v.Leader, strconv.Itoa(len(v.Members)), strconv.Itoa(len(v.Offsets))})
		for _, mv := range v.Members {
			m.Add([]string{v.Group, mv.MemberID, mv.InstanceID, mv.ClientID, mv.ClientHost, mv.Assignment})
		}
		for _, ov := range v.Offsets {
			epoch := ""
			if ov.LeaderEpoch >= 0 {
				epoch = strconv.Itoa(int(ov.LeaderEpoch))
			}
			o.Add([]string{v.Group, ov.Topic, strconv.Itoa(int(ov.Partition)), strconv.FormatInt(ov.Offset, 10), epoch, ov.Metadata})
		}
	}
	tables := []*output.Table{g, m, o}
	// KIP-848 consumer groups: each member's epoch, state and partitions, when there are any.
	cm := output.NewTable([]string{"GROUP", "MEMBER-ID", "INSTANCE-ID", "EPOCH", "STATE", "ASSIGNED", "PENDING-REVOCATION", "TARGET"})
	for _, v := range r.Groups {
		if v.Consumer == nil {
			continue
		}
		for _, mv := range v.Consumer.Members {
			cm.Add([]string{v.Group, mv.MemberID, mv.InstanceID, strconv.Itoa(int(mv.Epoch)), mv.State, mv.Assigned, mv.PendingRevocation, mv.Target})
		}
		if len(tables) == 3 {
			tables = append(tables, cm)
		}
	}
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := t.Write(w); err != nil {
			return err
		}
	}
	return nil
}

// Fleet is `claims`: the node table, a blank line, then the partition table; JSON and YAML
// hold both under "nodes" and "partitions".
type Fleet claims.Tables

// Text prints the node table, a blank line, then the partition table.
func (d Fleet) Text(w io.Writer) error {
	if err := output.List(w, output.Text, "", d.Nodes); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return output.List(w, output.Text, "", d.Partitions)
}

// Groups is `claims --group G` and `group describe`: the coordinator row, the group's state, its
// members, its lag; JSON and YAML hold one object per group under "data", the coordinator fields
// first.
type Groups []livegroups.GroupDetail

// Text prints, for each group, its coordinator row, its state, the coordinator's error if any,
// its members and its lag, the tables a blank line apart.
func (d Groups) Text(w io.Writer) error {
	for _, g := range d {
		if err := output.List(w, output.Text, "", []claims.GroupCoordinator{g.GroupCoordinator}); err != nil {
			return err
		}
		gen := output.None
		if g.Generation != nil {
			gen = strconv.Itoa(int(*g.Generation))
		}
		t := output.NewTable([]string{"STATE", "PROTOCOL-TYPE", "PROTOCOL", "GENERATION", "MEMBERS"})
		t.Add([]string{g.State, g.ProtocolType, g.Protocol, gen, strconv.Itoa(len(g.Members))})
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := t.Write(w); err != nil {
			return err
		}
		if g.DescribeError != "" {
			if _, err := fmt.Fprintf(w, "the coordinator answered: %s\n", g.DescribeError); err != nil {
				return err
			}
		}
		for _, part := range []func() error{
			func() error { return output.List(w, output.Text, "", g.Members) },
			func() error { return output.List(w, output.Text, "", g.Lag) },
		} {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
			if err := part(); err != nil {
				return err
			}
		}
	}
	return nil
}
