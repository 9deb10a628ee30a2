package inspect

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
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
	b = appendJSONString(b, r.Type)
	if r.Group != "" {
		b = append(b, `,"group":`...)
		b = appendJSONString(b, r.Group)
	}
	b = append(b, `,"fields":`...)
	b = r.Fields.AppendJSON(b)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are (encoding/json's HTML-safe set).
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString quotes s as JSON, escaping what JSON requires and <, >, & as encoding/json
// does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonSafe[c] {
			continue
		}
		if c >= 0x80 {
			// Multi-byte UTF-8 passes through; encoding/json would also escape U+2028/9 and
			// replace invalid bytes, which strconv.Quote-style handling covers below.
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == 0xFFFD && size == 1 || r == 0x2028 || r == 0x2029 {
				b = append(b, s[start:i]...)
				if r == 0xFFFD {
					b = append(b, `\ufffd`...)
				} else {
					b = append(b, `\u202`...)
					b = append(b, hexDigits[r&0xF])
				}
				start = i + size
			}
			i += size - 1
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// NewRecordRow builds the row of one entry; valid is what the fold said of it.
func NewRecordRow(e *Entry, valid bool) RecordRow {
	row := RecordRow{Partition: e.Partition, Offset: e.Offset}
	if e.Err != nil {
		row.Type, row.Error = "undecodable", e.Err.Error()
		row.Fields.err = row.Error
		return row
	}
	r := &e.Record
	row.Time, row.Claim, row.Valid, row.Type = r.Time, r.Claim, valid, r.Type.String()
	row.Group = RecordGroup(r)
	row.Fields.rec = *r
	return row
}

// RecordGroup is the consumer group a record is about, "" for claims and checkpoints.
func RecordGroup(r *record.Record) string {
	switch {
	case r.Group != nil:
		return r.Group.Name
	case r.OffsetCommit != nil:
		return r.OffsetCommit.Group
	case r.GroupDeleted != nil:
		return r.GroupDeleted.Group
	case r.OffsetDeleted != nil:
		return r.OffsetDeleted.Group
	case r.ConsumerGroup != nil:
		return r.ConsumerGroup.Name
	case r.TxnOffsets != nil:
		return r.TxnOffsets.Group
	}
	return ""
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
	Epoch           int32                `json:"epoch"`
	AssignmentEpoch int32                `json:"assignment_epoch"`
	Topics          []topicFields        `json:"topics"`
	Members         []ConsumerMemberView `json:"members"`
	Removed         []string             `json:"removed"`
}

type topicFields struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int32  `json:"partitions"`
}

// groupFields are a group record's fields in JSON; group records come once a generation, so
// encoding/json writes them.
type groupFields struct {
	Generation   int32        `json:"generation"`
	State        string       `json:"state"`
	ProtocolType string       `json:"protocol_type"`
	Protocol     string       `json:"protocol"`
	Leader       string       `json:"leader"`
	Members      []MemberView `json:"members"`
}

// AppendJSON appends the fields as a JSON object, as encoding/json would write it.
func (f RecordFields) AppendJSON(b []byte) []byte {
	if f.err != "" {
		b = append(b, `{"error":`...)
		b = appendJSONString(b, f.err)
		return append(b, '}')
	}
	r := &f.rec
	switch {
	case r.Type == record.TypeOffsetCommit && r.OffsetCommit != nil:
		return offsetView(r.OffsetCommit).AppendJSON(b)
	case r.Type == record.TypeClaim && r.ClaimInfo != nil:
		c := r.ClaimInfo
		b = append(b, `{"number":`...)
		b = strconv.AppendUint(b, c.Number, 10)
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, int64(c.Node), 10)
		b = append(b, `,"addr":`...)
		b = appendJSONString(b, c.Addr)
		return append(b, '}')
	case r.Type == record.TypeGroup && r.Group != nil:
		g := r.Group
		j, err := json.Marshal(groupFields{Generation: g.Generation, State: g.State, ProtocolType: g.ProtocolType, Protocol: g.Protocol, Leader: g.Leader, Members: memberViews(g)})
		if err != nil {
			// Nothing in groupFields can fail to encode; an empty object keeps the row valid JSON.
			return append(b, "{}"...)
		}
		return append(b, j...)
	case r.Type == record.TypeOffsetDeleted && r.OffsetDeleted != nil:
		b = append(b, `{"topic":`...)
		b = appendJSONString(b, r.OffsetDeleted.Topic)
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
		return append(b, '}')
	case r.Type == record.TypeTransaction && r.Transaction != nil:
		j, err := json.Marshal(NewTransactionView(*r.Transaction))
		if err != nil {
			return append(b, "{}"...)
		}
		return append(b, j...)
	case r.Type == record.TypeTxnOffsets && r.TxnOffsets != nil:
		o := r.TxnOffsets
		b = append(b, `{"transactional_id":`...)
		b = appendJSONString(b, o.TransactionalID)
		b = append(b, `,"producer_id":`...)
		b = strconv.AppendInt(b, o.ProducerID, 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendInt(b, int64(o.Epoch), 10)
		b = append(b, `,"end":`...)
		b = appendJSONString(b, o.End.String())
		b = append(b, `,"offsets":`...)
		b = strconv.AppendInt(b, int64(len(o.Offsets)), 10)
		return append(b, '}')
	case r.Type == record.TypeConsumerGroup && r.ConsumerGroup != nil:
		c := r.ConsumerGroup
		f := consumerGroupFields{Epoch: c.Epoch, AssignmentEpoch: c.AssignmentEpoch, Topics: []topicFields{},
			Members: ConsumerGroupView(*c).Members, Removed: c.Removed}
		for _, t := range c.Topics {
			f.Topics = append(f.Topics, topicFields{Name: t.Name, ID: uuidText(t.ID), Partitions: t.Partitions})
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

// TransactionView is a transaction record's fields in JSON and YAML.
type TransactionView struct {
	TransactionalID string         `json:"transactional_id"`
	ProducerID      int64          `json:"producer_id"`
	Epoch           int16          `json:"epoch"`
	State           string         `json:"state"`
	TimeoutMs       int64          `json:"timeout_ms"`
	Partitions      []TxnTopicView `json:"partitions"`
	Groups          []string       `json:"groups"`
	Started         string         `json:"started"`
	Updated         string         `json:"updated"`
}

// TxnTopicView is one topic's partitions in a transaction.
type TxnTopicView struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// NewTransactionView is the view of one transaction's state.
func NewTransactionView(x record.Transaction) TransactionView {
	v := TransactionView{TransactionalID: x.ID, ProducerID: x.ProducerID, Epoch: x.Epoch, State: x.State.String(),
		TimeoutMs: x.Timeout.Milliseconds(), Partitions: []TxnTopicView{}, Groups: x.Groups}
	for _, tp := range x.Partitions {
		v.Partitions = append(v.Partitions, TxnTopicView{Topic: tp.Topic, Partitions: tp.Partitions})
	}
	if v.Groups == nil {
		v.Groups = []string{}
	}
	if !x.Started.IsZero() {
		v.Started = x.Started.UTC().Format(time.RFC3339Nano)
	}
	if !x.Updated.IsZero() {
		v.Updated = x.Updated.UTC().Format(time.RFC3339Nano)
	}
	return v
}
