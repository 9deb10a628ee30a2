package groupadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
)

// TargetNames are the ways to say a target, as `group seek` takes them (each a flag) and the
// console's seek dialog (each a word, then its value): to earliest|latest, to-offset N,
// to-time T, to-commit-at T, shift N, undo.
var TargetNames = []string{"to", "to-offset", "to-time", "to-commit-at", "shift", "undo"}

// ParseTarget reads one target: its name (TargetNames) and value, with now for the times given
// as a duration ago. A time in the future is refused. CommitAt and Undo come without their
// offsets: Seeker.Plan reads them from the coordinator log.
func ParseTarget(name, value string, now time.Time) (Target, error) {
	switch name {
	case "to":
		switch value {
		case "earliest":
			return Target{Kind: Earliest}, nil
		case "latest":
			return Target{Kind: Latest}, nil
		}
		return Target{}, fmt.Errorf("to %q: want earliest or latest (to-offset, to-time and shift take the others)", value)
	case "to-offset":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return Target{}, fmt.Errorf("to-offset %q: an offset is a number, 0 or more", value)
		}
		return Target{Kind: Offset, Offset: n}, nil
	case "shift":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return Target{}, fmt.Errorf("shift %q: a shift is a number of records, negative to go back", value)
		}
		return Target{Kind: Shift, Shift: n}, nil
	case "to-time", "to-commit-at":
		pos, err := logread.ParsePosition(value, now)
		if err != nil || pos.HasOffset || !pos.Set() {
			return Target{}, fmt.Errorf("%s %q is neither an RFC 3339 time nor a duration ago (90m)", name, value)
		}
		if pos.Time.After(now) {
			return Target{}, fmt.Errorf("%s %s is in the future", name, pos.Time.UTC().Format(time.RFC3339))
		}
		if name == "to-time" {
			return Target{Kind: Time, Time: pos.Time}, nil
		}
		return Target{Kind: CommitAt, Time: pos.Time}, nil
	case "undo":
		if value != "" {
			return Target{}, fmt.Errorf("undo takes no value, got %q", value)
		}
		return Target{Kind: Undo}, nil
	}
	return Target{}, fmt.Errorf("%q is not a target: want one of %s", name, strings.Join(TargetNames, ", "))
}

// Seeker plans and commits seeks: the gateways through Admin, the coordinator log's history
// (for CommitAt and Undo) through Log. `group seek` and the console both use it.
type Seeker struct {
	Admin *kadm.Client
	Log   *logread.Log
	// Now is the clock of the seeks' ids.
	Now func() time.Time
}

// Plan resolves target (the offsets of a CommitAt or an Undo from the log) and loads the plan
// of group over only (every topic when empty). notes say what the plan leaves out: partitions
// an undo cannot give their "no commit" back.
func (s Seeker) Plan(ctx context.Context, group string, target Target, only []Topics) (p Plan, notes []string, err error) {
	switch target.Kind {
	case CommitAt, Undo:
		if s.Log == nil {
			return Plan{}, nil, errors.New("this target needs the coordinator log, and there is no connection to Iggy")
		}
	}
	switch target.Kind {
	case CommitAt:
		if target.Commits, err = CommitsAt(ctx, s.Log, group, target.Time); err != nil {
			return Plan{}, nil, err
		}
	case Undo:
		var missing []string
		if target, missing, err = LastSeek(ctx, s.Log, group); err != nil {
			return Plan{}, nil, err
		}
		for _, m := range missing {
			notes = append(notes, fmt.Sprintf("%s had no commit before seek %s: left as it is", m, target.Seek))
		}
	}
	p, err = Load(ctx, s.Admin, group, target, only)
	return p, notes, err
}

// Seek commits a plan the operator confirmed.
func (s Seeker) Seek(ctx context.Context, p Plan) error { return Commit(ctx, s.Admin, p, s.Now()) }
