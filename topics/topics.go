package topics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Partition is one Kafka partition as a reading finds it.
type Partition struct {
	Topic     string
	Partition int32
	// End is the Kafka end offset (the next offset written).
	End int64
	// Bytes and Records are what the partition stores now.
	Bytes, Records uint64
}

// Reading is one look at the fleet's topics at At.
type Reading struct {
	At         time.Time
	Partitions []Partition
	Commits    []claims.GroupOffset
}

// Row is one partition as the pane shows it. A rate is nil until a second reading, and where
// it cannot be told (a size that shrank as retention deleted segments, no record to size).
// JSON field names are an interface.
type Row struct {
	Topic      string   `json:"topic"`
	Partition  int32    `json:"partition"`
	End        int64    `json:"end_offset"`
	Bytes      uint64   `json:"bytes"`
	RecordsIn  *float64 `json:"records_in_per_second"`
	BytesIn    *float64 `json:"bytes_in_per_second"`
	RecordsOut *float64 `json:"records_out_per_second"`
	BytesOut   *float64 `json:"bytes_out_per_second"`
	// Groups are the groups with a committed offset on the partition, by name.
	Groups []string `json:"groups"`
	// Lag is the largest of those groups' lags in records (nil without a group).
	Lag *int64 `json:"lag"`
}

// Topic is a topic's partitions with their sums.
type Topic struct {
	Row
	Partitions []Row `json:"partitions"`
}

// Snapshot is the pane's content at At; Over is the time the rates are measured over (zero
// for a first reading).
type Snapshot struct {
	At     time.Time     `json:"at"`
	Over   time.Duration `json:"over"`
	Topics []Topic       `json:"topics"`
}

// Meter turns successive readings into rows; it keeps the previous reading.
type Meter struct {
	mu   sync.Mutex
	prev *Reading
}

type tp struct {
	topic string
	part  int32
}

// Add measures r against the previous reading and keeps r for the next.
func (m *Meter) Add(r Reading) Snapshot {
	m.mu.Lock()
	prev := m.prev
	m.prev = &r
	m.mu.Unlock()
	return Measure(prev, r)
}

// Measure is the rows of r with the rates since prev (none when prev is nil or not earlier).
func Measure(prev *Reading, r Reading) Snapshot {
	var secs float64
	if prev != nil && r.At.After(prev.At) {
		secs = r.At.Sub(prev.At).Seconds()
	}
	before := map[tp]Partition{}
	committed := map[tp]map[string]int64{}
	if secs > 0 {
		for _, p := range prev.Partitions {
			before[tp{p.Topic, p.Partition}] = p
		}
		for _, c := range prev.Commits {
			k := tp{c.Topic, c.Partition}
			if committed[k] == nil {
				committed[k] = map[string]int64{}
			}
			committed[k][c.Group] = c.Offset
		}
	}
	commits := map[tp][]claims.GroupOffset{}
	for _, c := range r.Commits {
		k := tp{c.Topic, c.Partition}
		commits[k] = append(commits[k], c)
	}
	byTopic := map[string][]Row{}
	for _, p := range r.Partitions {
		k := tp{p.Topic, p.Partition}
		row := Row{Topic: p.Topic, Partition: p.Partition, End: p.End, Bytes: p.Bytes, Groups: []string{}}
		var readNow int64
		for _, c := range commits[k] {
			if !slices.Contains(row.Groups, c.Group) {
				row.Groups = append(row.Groups, c.Group)
			}
			lag := max(0, p.End-c.Offset)
			if row.Lag == nil || lag > *row.Lag {
				row.Lag = &lag
			}
			if was, ok := committed[k][c.Group]; ok && c.Offset >= was {
				readNow += c.Offset - was
			}
		}
		slices.Sort(row.Groups)
		if was, ok := before[k]; ok {
			row.RecordsIn = rate(float64(max(0, p.End-was.End)), secs)
			if p.Bytes >= was.Bytes {
				row.BytesIn = rate(float64(p.Bytes-was.Bytes), secs)
			}
			row.RecordsOut = rate(float64(readNow), secs)
			if p.Records > 0 {
				row.BytesOut = rate(float64(readNow)*float64(p.Bytes)/float64(p.Records), secs)
			}
		}
		byTopic[p.Topic] = append(byTopic[p.Topic], row)
	}
	s := Snapshot{At: r.At, Topics: []Topic{}}
	if secs > 0 {
		s.Over = r.At.Sub(prev.At)
	}
	for _, name := range slices.Sorted(maps.Keys(byTopic)) {
		rows := byTopic[name]
		slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Partition, b.Partition) })
		s.Topics = append(s.Topics, Topic{Row: sum(name, rows), Partitions: rows})
	}
	return s
}

func rate(n, secs float64) *float64 {
	v := n / secs
	return &v
}

// sum is a topic's row: ends, bytes and rates added up (a rate only when every partition has
// one), the groups of any partition, the largest lag.
func sum(name string, rows []Row) Row {
	t := Row{Topic: name, Partition: -1, Groups: []string{}}
	add := func(dst **float64, v *float64, first bool) {
		switch {
		case first && v != nil:
			x := *v
			*dst = &x
		case *dst != nil && v != nil:
			**dst += *v
		default:
			*dst = nil
		}
	}
	for i, r := range rows {
		t.End += r.End
		t.Bytes += r.Bytes
		add(&t.RecordsIn, r.RecordsIn, i == 0)
		add(&t.BytesIn, r.BytesIn, i == 0)
		add(&t.RecordsOut, r.RecordsOut, i == 0)
		add(&t.BytesOut, r.BytesOut, i == 0)
		for _, g := range r.Groups {
			if !slices.Contains(t.Groups, g) {
				t.Groups = append(t.Groups, g)
			}
		}
		if r.Lag != nil && (t.Lag == nil || *r.Lag > *t.Lag) {
			l := *r.Lag
			t.Lag = &l
		}
	}
	slices.Sort(t.Groups)
	return t
}

// Store is what a Sampler asks Iggy; *iggy.Client has it.
type Store interface {
	GetTopics(ctx context.Context, stream wire.Identifier) ([]wire.Topic, error)
	GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error)
}

// Sampler reads the topics of Stream (the Kafka topics' Iggy stream) from Iggy and the groups'
// commits from Commits (the console's coordinator log), and measures them with its Meter.
type Sampler struct {
	Iggy    Store
	Stream  string
	Commits func(ctx context.Context) ([]claims.GroupOffset, error)
	Clock   clock.Clock
	meter   Meter
}

// Read is one Reading.
func (s *Sampler) Read(ctx context.Context) (Reading, error) {
	stream := wire.NamedID(s.Stream)
	ts, err := s.Iggy.GetTopics(ctx, stream)
	if err != nil {
		return Reading{}, fmt.Errorf("list the topics of stream %s: %w", s.Stream, err)
	}
	r := Reading{At: clock.Or(s.Clock).Now()}
	for _, t := range ts {
		d, err := s.Iggy.GetTopic(ctx, stream, wire.NamedID(t.Name))
		if err != nil {
			// A topic deleted between the two requests is left out.
			if errors.Is(err, wire.TopicIDNotFound) || errors.Is(err, wire.TopicNameNotFound) {
				continue
			}
			return Reading{}, fmt.Errorf("read topic %s: %w", t.Name, err)
		}
		for _, p := range d.Partitions {
			r.Partitions = append(r.Partitions, Partition{Topic: t.Name, Partition: int32(p.ID), End: bridge.HighWatermark(p.CurrentOffset, p.MessagesCount),
				Bytes: p.SizeBytes, Records: p.MessagesCount})
		}
	}
	if s.Commits != nil {
		if r.Commits, err = s.Commits(ctx); err != nil {
			return Reading{}, fmt.Errorf("read the groups' commits: %w", err)
		}
	}
	return r, nil
}

// Sample reads and measures against the previous sample.
func (s *Sampler) Sample(ctx context.Context) (Snapshot, error) {
	r, err := s.Read(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return s.meter.Add(r), nil
}
