// Package tail reads a topic's records through the gateways, from a position (the log start, the
// end, an offset, the first record at or after a time), and follows them as they arrive, as
// `iggy-kafka tail` prints them. It owns how record bytes are shown (Show: text, JSON or hex)
// and where a value is cut for a screen (never in JSON).
//
// The two things to know are Record, one record as a row, and Run, which reads from each
// partition's start offset (ListOffsets through kadm, by time where asked) with a consumer that
// never joins a group nor commits, and stops at the ends seen when it started unless it follows.
package tail

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
)

// Encodings of shown bytes.
const (
	EncText = "text"
	EncJSON = "json"
	EncHex  = "hex"
	EncNull = "null"
)

// Show is how record bytes are shown: nil as null, a JSON document as it is, UTF-8 text without
// control characters (tabs and newlines aside) as text, anything else as hex.
func Show(b []byte) (text, encoding string) {
	switch {
	case b == nil:
		return "", EncNull
	case len(b) > 0 && json.Valid(b):
		return string(b), EncJSON
	case utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' }):
		return string(b), EncText
	}
	return hex.EncodeToString(b), EncHex
}

// Header is one record header as shown. JSON field names are an interface.
type Header struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Encoding string `json:"encoding"`
}

// Record is one record as shown: whole in JSON and YAML, its key, headers and value cut to
// screen widths in text. JSON field names are an interface: add, never rename.
type Record struct {
	Topic         string    `json:"topic"`
	Partition     int32     `json:"partition"`
	Offset        int64     `json:"offset"`
	Timestamp     time.Time `json:"timestamp"`
	Key           string    `json:"key"`
	KeyEncoding   string    `json:"key_encoding"`
	Headers       []Header  `json:"headers"`
	Value         string    `json:"value"`
	ValueEncoding string    `json:"value_encoding"`
	// ValueBytes is the value's size as stored.
	ValueBytes int `json:"value_bytes"`
}

// Screen widths of the text columns, in characters.
const (
	keyWidth    = 24
	headerWidth = 32
	valueWidth  = 96
)

func (Record) Columns() []string {
	return []string{"PARTITION", "OFFSET", "TIME", "KEY", "HEADERS", "VALUE"}
}

func (r Record) Cells() []string {
	hs := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = h.Key + "=" + h.Value
	}
	value := r.Value
	if r.ValueEncoding == EncNull {
		value = "null"
	}
	return []string{strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10), r.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"),
		Cut(r.Key, keyWidth), Cut(strings.Join(hs, ","), headerWidth), cutValue(value, r.ValueBytes)}
}

// Cut shortens s to at most width characters on one line, ending in "…" when it was longer.
func Cut(s string, width int) string {
	s = OneLine(s)
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// OneLine writes carriage returns, newlines and tabs as \r, \n and \t, so s takes one line.
func OneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`).Replace(s)
}

// cutValue is Cut at valueWidth, saying the value's size when it was cut.
func cutValue(s string, size int) string {
	c := Cut(s, valueWidth)
	if c != OneLine(s) {
		c += " (" + strconv.Itoa(size) + " bytes)"
	}
	return c
}

// HexValue is the value's bytes in hex, whichever way Show wrote them ("" for a null value).
func (r Record) HexValue() string {
	switch r.ValueEncoding {
	case EncHex, EncNull:
		return r.Value
	}
	return hex.EncodeToString([]byte(r.Value))
}

// NewRecord shows r.
func NewRecord(r *kgo.Record) Record {
	out := Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp, Headers: make([]Header, len(r.Headers)), ValueBytes: len(r.Value)}
	out.Key, out.KeyEncoding = Show(r.Key)
	out.Value, out.ValueEncoding = Show(r.Value)
	for i, h := range r.Headers {
		v, enc := Show(h.Value)
		out.Headers[i] = Header{Key: h.Key, Value: v, Encoding: enc}
	}
	return out
}

// Options say what Run reads.
type Options struct {
	Topic string
	// Partitions are those read, every partition of Topic when nil.
	Partitions []int32
	// From is where each partition starts (inspect.ParseFrom); FromEnd starts at the end. With
	// neither, a follower starts at the end (as tail -f does) and a reader at the log start.
	From    logread.Position
	FromEnd bool
	// Follow keeps reading as records arrive, until ctx ends or Count records were read;
	// otherwise Run stops at the ends seen when it started.
	Follow bool
	// Count stops after that many records; 0 does not.
	Count int
	// Last, without From or FromEnd, starts each partition that many records before its end
	// (at its start when it holds fewer), as tail -n does.
	Last int
}

// ErrUnknownTopic is a tail of a topic or partition that does not exist.
var ErrUnknownTopic = errors.New("unknown topic or partition")

// Run reads o.Topic through the gateways (adm for the offsets, a consumer built from opts, the
// connection options of adm's client, for the records) and calls fn with each record, in
// offset order within a partition, and caughtUp after each fetch's records (a printer flushes
// there, so that a text table is sized on a whole fetch). It returns nil when ctx ends.
func Run(ctx context.Context, adm *kadm.Client, opts []kgo.Opt, o Options, fn func(Record) error, caughtUp func() error) error {
	ends, err := adm.ListEndOffsets(ctx, o.Topic)
	if err != nil {
		return fmt.Errorf("%w: list the end offsets of %s: %w", livegroups.ErrNoGateway, o.Topic, err)
	}
	ps := ends[o.Topic]
	if bad, ok := ps[-1]; ok && bad.Err != nil || len(ps) == 0 {
		return fmt.Errorf("%w: topic %s does not exist", ErrUnknownTopic, o.Topic)
	}
	parts := o.Partitions
	if parts == nil {
		parts = slices.Sorted(maps.Keys(ps))
	}
	starts, err := adm.ListStartOffsets(ctx, o.Topic)
	if err != nil {
		return fmt.Errorf("%w: list the start offsets of %s: %w", livegroups.ErrNoGateway, o.Topic, err)
	}
	var at kadm.ListedOffsets
	if !o.From.HasOffset && !o.From.Time.IsZero() {
		if at, err = adm.ListOffsetsAfterMilli(ctx, o.From.Time.UnixMilli(), o.Topic); err != nil {
			return fmt.Errorf("%w: list the offsets of %s at %s: %w", livegroups.ErrNoGateway, o.Topic, o.From.Time.UTC().Format(time.RFC3339), err)
		}
	}
	from := map[int32]int64{}
	stop := map[int32]int64{}
	for _, p := range parts {
		end, ok := ps[p]
		if !ok {
			return fmt.Errorf("%w: topic %s has no partition %d (it has %d)", ErrUnknownTopic, o.Topic, p, len(ps))
		}
		start, _ := starts.Lookup(o.Topic, p)
		if end.Err != nil || start.Err != nil {
			return fmt.Errorf("list the offsets of %s[%d]: %w", o.Topic, p, errors.Join(end.Err, start.Err))
		}
		switch {
		case o.Last > 0 && !o.FromEnd && !o.From.Set():
			from[p] = max(start.Offset, end.Offset-int64(o.Last))
		case o.FromEnd || o.Follow && !o.From.Set():
			from[p] = end.Offset
		case o.From.HasOffset:
			from[p] = min(max(int64(o.From.Offset), start.Offset), end.Offset)
		case !o.From.Time.IsZero():
			a, ok := at.Lookup(o.Topic, p)
			if !ok || a.Err != nil || a.Offset < 0 {
				from[p] = end.Offset
			} else {
				from[p] = a.Offset
			}
		default:
			from[p] = start.Offset
		}
		if !o.Follow {
			if from[p] >= end.Offset {
				delete(from, p)
				continue
			}
			stop[p] = end.Offset
		}
	}
	if len(from) == 0 {
		return nil
	}
	consume := map[string]map[int32]kgo.Offset{o.Topic: {}}
	for p, off := range from {
		consume[o.Topic][p] = kgo.NewOffset().At(off)
	}
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.ConsumePartitions(consume), kgo.FetchMaxWait(250*time.Millisecond))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	n := 0
	finished := map[int32]bool{}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil && !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		var done bool
		var cbErr error
		fs.EachRecord(func(r *kgo.Record) {
			end, bounded := stop[r.Partition]
			if done || cbErr != nil || bounded && r.Offset >= end {
				return
			}
			if cbErr = fn(NewRecord(r)); cbErr != nil {
				return
			}
			n++
			if o.Count > 0 && n >= o.Count {
				done = true
			}
			if bounded && r.Offset+1 >= end && !finished[r.Partition] {
				finished[r.Partition] = true
				if len(finished) == len(stop) {
					done = true
				}
			}
		})
		if cbErr == nil {
			cbErr = caughtUp()
		}
		if cbErr != nil || done {
			return cbErr
		}
	}
}
