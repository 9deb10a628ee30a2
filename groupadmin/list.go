package groupadmin

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// GroupRow is one group of `group list`. JSON field names are an interface: add, never rename.
type GroupRow struct {
	Group string `json:"group"`
	// Coordinator is the node that coordinates the group.
	Coordinator int32  `json:"coordinator"`
	Type        string `json:"type"`
	State       string `json:"state"`
	Protocol    string `json:"protocol"`
	Members     int    `json:"members"`
	// Topics counts the topics the group commits to or is assigned; Lag is the sum of its
	// partitions' lag in records, nil when a partition's could not be computed.
	Topics int    `json:"topics"`
	Lag    *int64 `json:"lag"`
	Error  string `json:"error,omitempty"`
}

func (GroupRow) Columns() []string {
	return []string{"GROUP", "COORDINATOR", "TYPE", "STATE", "PROTOCOL", "MEMBERS", "TOPICS", "LAG"}
}

func (r GroupRow) Cells() []string {
	lag := "-"
	if r.Lag != nil {
		lag = strconv.FormatInt(*r.Lag, 10)
	}
	return []string{r.Group, strconv.Itoa(int(r.Coordinator)), r.Type, r.State, r.Protocol, strconv.Itoa(r.Members), strconv.Itoa(r.Topics), lag}
}

// List lists the groups every gateway coordinates, by name, with their state, members and lag
// (kadm's Lag: DescribeGroups, OffsetFetch and ListOffsets joined).
func List(ctx context.Context, adm *kadm.Client) ([]GroupRow, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, noGateway("list groups", err)
	}
	names := slices.Sorted(maps.Keys(listed))
	out := make([]GroupRow, 0, len(names))
	if len(names) == 0 {
		return out, nil
	}
	lags, err := adm.Lag(ctx, names...)
	if err != nil {
		return nil, noGateway("describe groups", err)
	}
	for _, name := range names {
		l := listed[name]
		row := GroupRow{Group: name, Coordinator: l.Coordinator, Type: l.GroupType, State: l.State, Protocol: l.ProtocolType}
		if row.Type == "" {
			row.Type = "classic"
		}
		if gl, ok := lags[name]; ok {
			if gl.State != "" {
				row.State = gl.State
			}
			if gl.Protocol != "" {
				row.Protocol = gl.ProtocolType + "/" + gl.Protocol
			}
			row.Members = len(gl.Members)
			row.Topics = len(gl.Lag)
			if err := gl.Error(); err != nil {
				row.Error = err.Error()
			} else {
				total, ok := int64(0), true
				for _, pl := range gl.Lag.Sorted() {
					if pl.Err != nil || pl.Lag < 0 {
						ok = false
						continue
					}
					total += pl.Lag
				}
				if ok {
					row.Lag = &total
				}
			}
		} else {
			row.Error = fmt.Sprintf("group %s was listed but not described", name)
		}
		out = append(out, row)
	}
	return out, nil
}
