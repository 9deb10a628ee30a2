package partlog

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// FsyncPolicy says when appended bytes are forced to stable storage. The zero
// value is FsyncInterval.
type FsyncPolicy int

const (
	// FsyncInterval syncs from a background goroutine every Options.FsyncInterval.
	FsyncInterval FsyncPolicy = iota
	// FsyncAlways syncs before Append returns.
	FsyncAlways
	// FsyncNever leaves writeback to the operating system.
	FsyncNever
)

// ParseFsyncPolicy accepts "always", "interval" and "never" (any case).
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "always":
		return FsyncAlways, nil
	case "interval":
		return FsyncInterval, nil
	case "never":
		return FsyncNever, nil
	}
	return 0, fmt.Errorf("unknown fsync policy %q (want always, interval or never)", s)
}

func (p FsyncPolicy) String() string {
	switch p {
	case FsyncAlways:
		return "always"
	case FsyncInterval:
		return "interval"
	case FsyncNever:
		return "never"
	}
	return fmt.Sprintf("FsyncPolicy(%d)", int(p))
}

// Set and Type let a policy be a command-line flag (pflag.Value).
func (p *FsyncPolicy) Set(s string) error {
	v, err := ParseFsyncPolicy(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Type names the flag's value kind in help output.
func (p *FsyncPolicy) Type() string { return "always|interval|never" }

// MarshalText and UnmarshalText let a policy travel in JSON and YAML configs.
func (p FsyncPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses the names accepted by ParseFsyncPolicy.
func (p *FsyncPolicy) UnmarshalText(b []byte) error { return p.Set(string(b)) }

// Defaults applied by Open to zero fields of Options.
const (
	DefaultSegmentBytes  = 1 << 30
	DefaultFsyncInterval = time.Second
)

// Options configure a Log. Zero fields take the defaults.
type Options struct {
	// PartitionID is stamped into every appended batch header.
	PartitionID uint32
	// SegmentBytes is the size past which the log rolls to a new segment
	// (default 1 GiB). A batch larger than this gets a segment of its own.
	SegmentBytes int64
	// Fsync is the durability policy (default FsyncInterval).
	Fsync FsyncPolicy
	// FsyncInterval is the period of the background sync under FsyncInterval
	// (default 1s).
	FsyncInterval time.Duration
	// Logger receives recovery reports and background sync failures
	// (default: discarded).
	Logger *slog.Logger
	// Clock runs the background sync's period and judges when it falls behind (default: the
	// wall clock).
	Clock clock.Clock
}

func (o *Options) fill() error {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.FsyncInterval <= 0 {
		o.FsyncInterval = DefaultFsyncInterval
	}
	if o.Fsync < FsyncInterval || o.Fsync > FsyncNever {
		return fmt.Errorf("partlog: invalid fsync policy %d", int(o.Fsync))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Clock = clock.Or(o.Clock)
	return nil
}
