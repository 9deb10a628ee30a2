package livegroups

import (
	"context"

	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
)

// Summary is the verdict of comparing a replay with the gateways (replay --diff-live). JSON
// field names are an interface.
type Summary struct {
	Partition int `json:"partition"`
	// Agree is whether the gateways answer for every group what the log says.
	Agree bool `json:"agree"`
	// Groups counts the groups of the replay.
	Groups      int `json:"groups"`
	Differences int `json:"differences"`
	// GroupsDiffering counts the groups with a difference, those only the gateways know included.
	GroupsDiffering int `json:"groups_differing"`
}

// newSummary concludes DiffLive's differences for a replay.
func newSummary(r *replay.Result, diffs []Difference) Summary {
	differing := map[string]bool{}
	for _, d := range diffs {
		differing[d.Group] = true
	}
	return Summary{Partition: r.Partition, Agree: len(diffs) == 0, Groups: len(r.Groups), Differences: len(diffs), GroupsDiffering: len(differing)}
}

// CompareReplay is `replay --diff-live`: it compares a replayed partition's groups with what the
// gateways answer (DiffLive) and concludes.
func CompareReplay(ctx context.Context, adm LiveGroups, r *replay.Result) ([]Difference, Summary, error) {
	diffs, err := DiffLive(ctx, adm, r.Partition, r.Groups)
	if err != nil {
		return nil, Summary{}, err
	}
	return diffs, newSummary(r, diffs), nil
}
