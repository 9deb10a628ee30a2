package verify

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
)

// Kinds of Finding. They are an interface (scripts match them); add, never rename.
const (
	FindingVoidFenced      = "void-fenced"         // written under an older claim after a newer one: a fenced owner wrote on
	FindingVoidUnclaimed   = "void-unclaimed"      // written under a claim number nobody claimed yet
	FindingVoidMalformed   = "void-malformed"      // the right claim, but a record whose body does not match its type
	FindingClaimDuplicate  = "claim-duplicate"     // a claim repeating the newest claim's number
	FindingClaimDecreasing = "claim-decreasing"    // a claim below the newest claim's number
	FindingOffsetGap       = "offset-gap"          // offsets missing between two messages (or at the start)
	FindingUndecodable     = "undecodable"         // a payload record.Decode refuses
	FindingCheckpointDiff  = "checkpoint-mismatch" // a checkpoint that disagrees with the records it covers
	FindingCheckpointStale = "checkpoint-stale"    // valid changes after a checkpoint's Through, before it, that it drops
)

// Finding is one problem `inspect --verify` found. JSON field names are an interface.
type Finding struct {
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
	Kind      string `json:"kind"`
	Detail    string `json:"detail"`
}

func (Finding) Columns() []string { return []string{"PARTITION", "OFFSET", "FINDING", "DETAIL"} }

func (f Finding) Cells() []string {
	return []string{strconv.Itoa(f.Partition), strconv.FormatUint(f.Offset, 10), f.Kind, f.Detail}
}

// Checker verifies one partition as its entries arrive in log order; Verify drives one per
// partition. It keeps the same fold every reader uses, plus what the checks need.
type Checker struct {
	Partition int

	st         *record.State
	next       uint64
	lastChange uint64
	changed    bool
	found      []Finding
}

// NewChecker starts checking a partition from its first offset.
func NewChecker(partition int) *Checker {
	return &Checker{Partition: partition, st: record.NewState()}
}

func (c *Checker) add(off uint64, kind, format string, args ...any) {
	c.found = append(c.found, Finding{Partition: c.Partition, Offset: off, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// Check folds one entry and returns the findings it caused (nil for a clean entry).
func (c *Checker) Check(e *logread.Entry) []Finding {
	c.found = c.found[:0]
	if e.Offset != c.next {
		if e.Offset > c.next {
			c.add(c.next, FindingOffsetGap, "offsets %d..%d are missing", c.next, e.Offset-1)
		} else {
			c.add(e.Offset, FindingOffsetGap, "offset %d comes again after %d", e.Offset, c.next-1)
		}
	}
	c.next = e.Offset + 1
	if e.Err != nil {
		c.add(e.Offset, FindingUndecodable, "%d bytes: %v", e.Size, e.Err)
		return c.result()
	}
	r := &e.Record
	newest := c.st.Claim()
	switch {
	case r.Type == record.TypeClaim && r.Claim == newest.Number && newest.Number != 0:
		c.add(e.Offset, FindingClaimDuplicate, "claim %d by node %d repeats the claim of node %d at offset %d", r.Claim, claimNode(r), newest.Node, c.st.ClaimOffset())
	case r.Type == record.TypeClaim && r.Claim < newest.Number:
		c.add(e.Offset, FindingClaimDecreasing, "claim %d by node %d comes after claim %d of node %d at offset %d", r.Claim, claimNode(r), newest.Number, newest.Node, c.st.ClaimOffset())
	case r.Type == record.TypeCheckpoint && r.Checkpoint != nil && r.Claim == newest.Number:
		c.checkCheckpoint(e.Offset, r.Checkpoint)
	}
	first := c.st.Counts().Applied == 0
	valid := c.st.Apply(e.Offset, *r)
	if !valid && r.Type != record.TypeClaim {
		switch {
		case r.Claim < newest.Number:
			c.add(e.Offset, FindingVoidFenced, "%s %s written under claim %d after claim %d of node %d at offset %d", r.Type, groupText(r), r.Claim, newest.Number, newest.Node, c.st.ClaimOffset())
		case r.Claim > newest.Number:
			c.add(e.Offset, FindingVoidUnclaimed, "%s %s written under claim %d, but the newest claim is %d", r.Type, groupText(r), r.Claim, newest.Number)
		default:
			c.add(e.Offset, FindingVoidMalformed, "%s record without its body", r.Type)
		}
	}
	if valid && !first && r.Type != record.TypeClaim && r.Type != record.TypeCheckpoint {
		c.lastChange, c.changed = e.Offset, true
	}
	return c.result()
}

func (c *Checker) result() []Finding {
	if len(c.found) == 0 {
		return nil
	}
	return slices.Clone(c.found)
}

func claimNode(r *record.Record) int32 {
	if r.ClaimInfo == nil {
		return -1
	}
	return r.ClaimInfo.Node
}

func groupText(r *record.Record) string {
	if g := stateview.RecordGroup(r); g != "" {
		return "of group " + strconv.Quote(g)
	}
	return ""
}

// checkCheckpoint compares a valid checkpoint with the fold of the records before it.
func (c *Checker) checkCheckpoint(off uint64, cp *record.Checkpoint) {
	if c.st.Counts().Applied == 0 {
		return // a partition that starts at a checkpoint has nothing to compare it with
	}
	if c.changed && c.lastChange > cp.Through {
		c.add(off, FindingCheckpointStale, "checkpoint through %d drops the valid change at offset %d", cp.Through, c.lastChange)
		return
	}
	want := c.st.Snapshot(cp.Through)
	if d := checkpointDiff(want, *cp); d != "" {
		c.add(off, FindingCheckpointDiff, "checkpoint through %d: %s", cp.Through, d)
	}
}

// checkpointDiff names the first difference between the fold's snapshot and a checkpoint,
// comparing encoded bytes so that nil and empty, or two spellings of a time, do not count.
func checkpointDiff(want, got record.Checkpoint) string {
	groups := func(cp record.Checkpoint) map[string][]byte {
		m := make(map[string][]byte, len(cp.Groups)+len(cp.ConsumerGroups))
		for i := range cp.Groups {
			g := cp.Groups[i]
			b, _ := record.Encode(record.Record{Type: record.TypeGroup, Group: &g})
			m[g.Name] = b
		}
		for i := range cp.ConsumerGroups {
			g := cp.ConsumerGroups[i]
			b, _ := record.Encode(record.Record{Type: record.TypeConsumerGroup, ConsumerGroup: &g})
			m[g.Name] = b
		}
		return m
	}
	type key struct {
		g, t string
		p    int32
	}
	offsets := func(cp record.Checkpoint) map[key][]byte {
		m := make(map[key][]byte, len(cp.Offsets))
		for i := range cp.Offsets {
			o := cp.Offsets[i]
			b, _ := record.Encode(record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &o})
			m[key{o.Group, o.Topic, o.Partition}] = b
		}
		return m
	}
	var diffs []string
	wg, gg := groups(want), groups(got)
	for name, b := range wg {
		if gb, ok := gg[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("group %q missing", name))
		} else if !bytes.Equal(b, gb) {
			diffs = append(diffs, fmt.Sprintf("group %q differs", name))
		}
	}
	for name := range gg {
		if _, ok := wg[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("group %q not in the log", name))
		}
	}
	wo, gotOff := offsets(want), offsets(got)
	for k, b := range wo {
		if gb, ok := gotOff[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("offset %s/%s[%d] missing", k.g, k.t, k.p))
		} else if !bytes.Equal(b, gb) {
			diffs = append(diffs, fmt.Sprintf("offset %s/%s[%d] differs", k.g, k.t, k.p))
		}
	}
	for k := range gotOff {
		if _, ok := wo[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("offset %s/%s[%d] not in the log", k.g, k.t, k.p))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	slices.Sort(diffs)
	if len(diffs) > 3 {
		return strings.Join(diffs[:3], "; ") + fmt.Sprintf("; and %d more", len(diffs)-3)
	}
	return strings.Join(diffs, "; ")
}

// Summary is the verdict of a verify: how much of the log it read and how much it found.
// JSON field names are an interface.
type Summary struct {
	Partitions int `json:"partitions"`
	// Records counts every message read, undecodable ones included.
	Records  uint64 `json:"records"`
	Findings int    `json:"findings"`
}

// Verify checks every record of the partitions from their start and calls emit with each
// finding; it returns what it read and how many findings it had.
func Verify(ctx context.Context, l *logread.Log, partitions []int, emit func(Finding) error) (Summary, error) {
	var sum Summary
	if len(partitions) == 0 {
		partitions = logread.AllPartitions()
	}
	for _, p := range partitions {
		if err := logread.CheckPartition(p); err != nil {
			return sum, err
		}
	}
	ends, err := l.Ends(ctx)
	if err != nil {
		return sum, err
	}
	for _, p := range partitions {
		c := NewChecker(p)
		err := l.ReadAcross(ctx, p, 0, ends[p], func(e *logread.Entry) error {
			sum.Records++
			for _, f := range c.Check(e) {
				sum.Findings++
				if err := emit(f); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return sum, err
		}
		sum.Partitions++
	}
	return sum, nil
}
