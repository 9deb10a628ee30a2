package inspect

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// RecordRow is one record as `inspect` shows it. JSON field names are an interface.
type RecordRow struct {
	Partition int       `json:"partition"`
	Offset    uint64    `json:"offset"`
	Time      time.Time `json:"time"`
	Claim     uint64    `json:"claim"`
	// Valid is false for a void record (written under a claim that is not the newest) and for
	// one that could not be decoded.
	Valid bool   `json:"valid"`
	Type  string `json:"type"`
	// Group is the consumer group the record is about, "" for claims and checkpoints.
	Group string `json:"group,omitempty"`
	// Fields are the record's own fields, by its type: key=value text in a table, an object in
	// JSON and YAML.
	Fields RecordFields `json:"fields"`
	// Error is why the payload could not be decoded.
	Error string `json:"error,omitempty"`
}

func (RecordRow) Columns() []string {
	return []string{"PARTITION", "OFFSET", "TIME", "CLAIM", "VALID", "TYPE", "GROUP", "FIELDS"}
}

func (r RecordRow) Cells() []string {
	t, claim, valid := "", "", "void"
	if !r.Time.IsZero() {
		t = r.Time.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if r.Type != "undecodable" {
		claim = strconv.FormatUint(r.Claim, 10)
	}
	if r.Valid {
		valid = "valid"
	}
	return []string{strconv.Itoa(r.Partition), strconv.FormatUint(r.Offset, 10), t, claim, valid, r.Type, r.Group, r.Fields.String()}
}

// AppendJSON encodes the row as encoding/json would (same names, same order, times in
// RFC 3339 with nanoseconds); inspect -o json writes a million of them.
func (r RecordRow) AppendJSON(b []byte) []byte {
	b = append(b, `{"partition":`...)
	b = strconv.AppendInt(b, int64(r.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, r.Offset, 10)
	b = append(b, `,"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","claim":`...)
	b = strconv.AppendUint(b, r.Claim, 10)
	b = append(b, `,"valid":`...)
	b = strconv.AppendBool(b, r.Valid)
	b = append(b, `,"type":`...)
	b = output.AppendJSONString(b, r.Type)
	if r.Group != "" {
		b = append(b, `,"group":`...)
		b = output.AppendJSONString(b, r.Group)
	}
	b = append(b, `,"fields":`...)
	b = r.Fields.AppendJSON(b)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = output.AppendJSONString(b, r.Error)
	}
	return append(b, '}')
}

// NewRecordRow builds the row of one entry; valid is what the fold said of it.
func NewRecordRow(e *logread.Entry, valid bool) RecordRow {
	row := RecordRow{Partition: e.Partition, Offset: e.Offset}
	if e.Err != nil {
		row.Type, row.Error = "undecodable", e.Err.Error()
		row.Fields.err = row.Error
		return row
	}
	r := &e.Record
	row.Time, row.Claim, row.Valid, row.Type = r.Time, r.Claim, valid, r.Type.String()
	row.Group = stateview.RecordGroup(r)
	row.Fields.rec = *r
	return row
}

// RecordFields are one record's own fields, those its type carries beyond the header (the
// group is the row's), or the error of a record that could not be decoded. As text they are
// space-separated key=value pairs, values quoted where they hold blanks, quotes or
// non-printable bytes; as JSON an object, whose keys are an interface:
//
//	claim           number, node, addr
//	group           generation, state, protocol_type, protocol, leader, members (as replay's)
//	offset-commit   topic, partition, offset, leader_epoch, metadata, expire (as replay's offsets)
//	group-deleted   (none)
//	offset-deleted  topic, partition
//	checkpoint      through, groups, offsets, consumer_groups, transactions (how many of each
//	                it holds; as text consumer_groups and transactions only when not 0)
//	consumer-group  epoch, assignment_epoch, topics [{name, id, partitions}], members (those it
//	                adds or changes, as replay's consumer members), removed (member ids); as
//	                text the counts of members and removed
//	transaction     transactional_id, producer_id, epoch, state (Kafka's name), timeout_ms,
//	                partitions [{topic, partitions}], groups, started and updated (RFC 3339,
//	                "" when unset); as text the count of partitions and groups
//	txn-offsets     transactional_id, producer_id, epoch, end (pending, commit, abort),
//	                offsets (how many it holds)
//	undecodable     error
type RecordFields struct {
	rec record.Record
	err string
}

// String is the fields as text.
func (f RecordFields) String() string {
	var buf [160]byte
	return string(f.AppendText(buf[:0]))
}

// MarshalJSON is the fields as a JSON object.
func (f RecordFields) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendText appends what String returns to dst.
func (f RecordFields) AppendText(dst []byte) []byte {
	l := fieldList{b: dst, start: len(dst)}
	if f.err != "" {
		l.key("error")
		l.b = strconv.AppendQuote(l.b, f.err)
		return l.b
	}
	r := &f.rec
	switch r.Type {
	case record.TypeClaim:
		if c := r.ClaimInfo; c != nil {
			l.uint("number", c.Number)
			l.int("node", int64(c.Node))
			l.str("addr", c.Addr)
		}
	case record.TypeGroup:
		if g := r.Group; g != nil {
			l.int("generation", int64(g.Generation))
			l.str("state", g.State)
			l.str("protocol_type", g.ProtocolType)
			l.str("protocol", g.Protocol)
			l.str("leader", g.Leader)
			l.int("members", int64(len(g.Members)))
		}
	case record.TypeOffsetCommit:
		if o := r.OffsetCommit; o != nil {
			l.str("topic", o.Topic)
			l.int("partition", int64(o.Partition))
			l.int("offset", o.Offset)
			l.int("leader_epoch", int64(o.LeaderEpoch))
			if o.Metadata != "" {
				l.str("metadata", o.Metadata)
			}
			if !o.Expire.IsZero() {
				l.str("expire", o.Expire.UTC().Format(time.RFC3339))
			}
		}
	case record.TypeOffsetDeleted:
		if o := r.OffsetDeleted; o != nil {
			l.str("topic", o.Topic)
			l.int("partition", int64(o.Partition))
		}
	case record.TypeCheckpoint:
		if c := r.Checkpoint; c != nil {
			l.uint("through", c.Through)
			l.int("groups", int64(len(c.Groups)))
			l.int("offsets", int64(len(c.Offsets)))
			if len(c.ConsumerGroups) > 0 {
				l.int("consumer_groups", int64(len(c.ConsumerGroups)))
			}
			if len(c.Transactions) > 0 {
				l.int("transactions", int64(len(c.Transactions)))
			}
			if len(c.Topics) > 0 {
				l.int("topics", int64(len(c.Topics)))
			}
		}
	case record.TypeTransaction:
		if x := r.Transaction; x != nil {
			l.str("transactional_id", x.ID)
			l.int("producer_id", x.ProducerID)
			l.int("epoch", int64(x.Epoch))
			l.str("state", x.State.String())
			l.int("timeout_ms", x.Timeout.Milliseconds())
			n := 0
			for _, tp := range x.Partitions {
				n += len(tp.Partitions)
			}
			l.int("partitions", int64(n))
			l.int("groups", int64(len(x.Groups)))
		}
	case record.TypeTopic:
		if x := r.Topic; x != nil {
			l.str("topic", x.Name)
			if x.Gone() {
				l.str("incarnation", "none")
			} else {
				l.uint("topic_id", uint64(x.ID))
				l.uint("created_us", x.Created)
			}
		}
	case record.TypeTxnOffsets:
		if o := r.TxnOffsets; o != nil {
			l.str("transactional_id", o.TransactionalID)
			l.int("producer_id", o.ProducerID)
			l.int("epoch", int64(o.Epoch))
			l.str("end", o.End.String())
			l.int("offsets", int64(len(o.Offsets)))
		}
	case record.TypeConsumerGroup:
		if c := r.ConsumerGroup; c != nil {
			l.int("epoch", int64(c.Epoch))
			l.int("assignment_epoch", int64(c.AssignmentEpoch))
			l.int("members", int64(len(c.Members)))
			l.int("removed", int64(len(c.Removed)))
		}
	}
	return l.b
}

// consumerGroupFields are a consumer-group record's fields in JSON.
type consumerGroupFields struct {
	Epoch           int32                          `json:"epoch"`
	AssignmentEpoch int32                          `json:"assignment_epoch"`
	Topics          []topicFields                  `json:"topics"`
	Members         []stateview.ConsumerMemberView `json:"members"`
	Removed         []string                       `json:"removed"`
}

type topicFields struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int32  `json:"partitions"`
}

// groupFields are a group record's fields in JSON; group records come once a generation, so
// encoding/json writes them.
type groupFields struct {
	Generation   int32                  `json:"generation"`
	State        string                 `json:"state"`
	ProtocolType string                 `json:"protocol_type"`
	Protocol     string                 `json:"protocol"`
	Leader       string                 `json:"leader"`
	Members      []stateview.MemberView `json:"members"`
}

// AppendJSON appends the fields as a JSON object, as encoding/json would write it.
func (f RecordFields) AppendJSON(b []byte) []byte {
	if f.err != "" {
		b = append(b, `{"error":`...)
		b = output.AppendJSONString(b, f.err)
		return append(b, '}')
	}
	r := &f.rec
	switch {
	case r.Type == record.TypeOffsetCommit && r.OffsetCommit != nil:
		return stateview.NewOffsetView(r.OffsetCommit).AppendJSON(b)
	case r.Type == record.TypeClaim && r.ClaimInfo != nil:
		c := r.ClaimInfo
		b = append(b, `{"number":`...)
		b = strconv.AppendUint(b, c.Number, 10)
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, int64(c.Node), 10)
		b = append(b, `,"addr":`...)
		b = output.AppendJSONString(b, c.Addr)
		return append(b, '}')
	case r.Type == record.TypeGroup && r.Group != nil:
		g := r.Group
		j, err := json.Marshal(groupFields{Generation: g.Generation, State: g.State, ProtocolType: g.ProtocolType, Protocol: g.Protocol, Leader: g.Leader, Members: stateview.MemberViews(g)})
		if err != nil {
			// Nothing in groupFields can fail to encode; an empty object keeps the row valid JSON.
			return append(b, "{}"...)
		}
		return append(b, j...)
	case r.Type == record.TypeOffsetDeleted && r.OffsetDeleted != nil:
		b = append(b, `{"topic":`...)
		b = output.AppendJSONString(b, r.OffsetDeleted.Topic)
		b = append(b, `,"partition":`...)
		b = strconv.AppendInt(b, int64(r.OffsetDeleted.Partition), 10)
		return append(b, '}')
	case r.Type == record.TypeCheckpoint && r.Checkpoint != nil:
		c := r.Checkpoint
		b = append(b, `{"through":`...)
		b = strconv.AppendUint(b, c.Through, 10)
		b = append(b, `,"groups":`...)
		b = strconv.AppendInt(b, int64(len(c.Groups)), 10)
		b = append(b, `,"offsets":`...)
		b = strconv.AppendInt(b, int64(len(c.Offsets)), 10)
		b = append(b, `,"consumer_groups":`...)
		b = strconv.AppendInt(b, int64(len(c.ConsumerGroups)), 10)
		b = append(b, `,"transactions":`...)
		b = strconv.AppendInt(b, int64(len(c.Transactions)), 10)
		if len(c.Topics) > 0 {
			b = append(b, `,"topics":`...)
			b = strconv.AppendInt(b, int64(len(c.Topics)), 10)
		}
		return append(b, '}')
	case r.Type == record.TypeTopic && r.Topic != nil:
		b = append(b, `{"topic":`...)
		b = output.AppendJSONString(b, r.Topic.Name)
		if !r.Topic.Gone() {
			b = append(b, `,"topic_id":`...)
			b = strconv.AppendUint(b, uint64(r.Topic.ID), 10)
			b = append(b, `,"created_us":`...)
			b = strconv.AppendUint(b, r.Topic.Created, 10)
		}
		return append(b, '}')
	case r.Type == record.TypeTransaction && r.Transaction != nil:
		j, err := json.Marshal(stateview.NewTransactionView(*r.Transaction))
		if err != nil {
			return append(b, "{}"...)
		}
		return append(b, j...)
	case r.Type == record.TypeTxnOffsets && r.TxnOffsets != nil:
		o := r.TxnOffsets
		b = append(b, `{"transactional_id":`...)
		b = output.AppendJSONString(b, o.TransactionalID)
		b = append(b, `,"producer_id":`...)
		b = strconv.AppendInt(b, o.ProducerID, 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendInt(b, int64(o.Epoch), 10)
		b = append(b, `,"end":`...)
		b = output.AppendJSONString(b, o.End.String())
		b = append(b, `,"offsets":`...)
		b = strconv.AppendInt(b, int64(len(o.Offsets)), 10)
		return append(b, '}')
	case r.Type == record.TypeConsumerGroup && r.ConsumerGroup != nil:
		c := r.ConsumerGroup
		f := consumerGroupFields{Epoch: c.Epoch, AssignmentEpoch: c.AssignmentEpoch, Topics: []topicFields{},
			Members: stateview.ConsumerGroupView(*c).Members, Removed: c.Removed}
		for _, t := range c.Topics {
			f.Topics = append(f.Topics, topicFields{Name: t.Name, ID: stateview.UUIDText(t.ID), Partitions: t.Partitions})
		}
		if f.Removed == nil {
			f.Removed = []string{}
		}
		j, err := json.Marshal(f)
		if err != nil {
			return append(b, "{}"...)
		}
		return append(b, j...)
	}
	return append(b, "{}"...)
}

type fieldList struct {
	b     []byte
	start int
}

func (f *fieldList) key(k string) {
	if len(f.b) > f.start {
		f.b = append(f.b, ' ')
	}
	f.b = append(f.b, k...)
	f.b = append(f.b, '=')
}

func (f *fieldList) int(k string, v int64) {
	f.key(k)
	f.b = strconv.AppendInt(f.b, v, 10)
}

func (f *fieldList) uint(k string, v uint64) {
	f.key(k)
	f.b = strconv.AppendUint(f.b, v, 10)
}

func (f *fieldList) str(k, v string) {
	f.key(k)
	if needsQuote(v) {
		f.b = strconv.AppendQuote(f.b, v)
	} else {
		f.b = append(f.b, v...)
	}
}

// needsQuote reports whether a value would be ambiguous bare: empty, or holding a blank, a quote,
// an equals sign or anything outside printable ASCII.
func needsQuote(v string) bool {
	if v == "" {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '=' {
			return true
		}
	}
	return false
}
