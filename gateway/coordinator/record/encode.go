package record

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Version is the newest format version (the first byte of every record). Version 2 added the
// consumer-group record and the consumer groups of a checkpoint, version 3 the transaction record
// and the transactions of a checkpoint, version 4 the offsets a transaction stages for its groups
// (TxnOffsetCommit), version 5 the txn-offsets record a group's coordinator keeps them in and the
// txn-offsets of a checkpoint, version 6 the topic record and the topics of a checkpoint, version
// 7 a transaction's last and next producer (KIP-360 retries, transactions v2); Decode reads
// versions 1 to 7. Encode writes the oldest
// version that holds the record (EncodeVersion), so a log without transactions stays readable by
// gateways that know only version 2, and a version-2 reader skips what it cannot hold
// (ErrVersion) instead of misreading it. The layout is documented field by field in the package
// doc of gateway/coordinator.
const Version = 7

// EncodeVersion is the version Encode writes r in: 7 for a transaction record, or a checkpoint
// holding a transaction, with a last or next producer; 6 for a topic record or a checkpoint holding
// topics, 5 for a txn-offsets record or a checkpoint
// holding txn-offsets, 4 for a transaction record or a checkpoint holding a transaction with
// staged offsets, 3 for the other transaction records and checkpoints holding transactions, 2
// for every other record.
func EncodeVersion(r *Record) uint8 {
	switch {
	case r.Type == TypeTransaction && r.Transaction != nil && r.Transaction.holdsProducers():
		return 7
	case r.Type == TypeCheckpoint && r.Checkpoint != nil && slices.ContainsFunc(r.Checkpoint.Transactions, Transaction.holdsProducers):
		return 7
	case r.Type == TypeTopic:
		return 6
	case r.Type == TypeCheckpoint && r.Checkpoint != nil && len(r.Checkpoint.Topics) > 0:
		return 6
	case r.Type == TypeTxnOffsets:
		return 5
	case r.Type == TypeCheckpoint && r.Checkpoint != nil && len(r.Checkpoint.TxnOffsets) > 0:
		return 5
	case r.Type == TypeTransaction && r.Transaction != nil && len(r.Transaction.Offsets) > 0:
		return 4
	case r.Type == TypeTransaction:
		return 3
	case r.Type == TypeCheckpoint && r.Checkpoint != nil && len(r.Checkpoint.Transactions) > 0:
		for i := range r.Checkpoint.Transactions {
			if len(r.Checkpoint.Transactions[i].Offsets) > 0 {
				return 4
			}
		}
		return 3
	}
	return 2
}

// holdsProducers reports whether t holds a last or next producer (format version 7).
func (t Transaction) holdsProducers() bool { return t.Last != nil || t.Next != nil }

// MinVersion is the oldest format version Decode reads.
const MinVersion = 1

// HeaderSize is the fixed part every record starts with: version, type, claim, time.
const HeaderSize = 1 + 1 + 8 + 8

// Errors a DecodeError wraps, so callers can tell an unknown version (a newer writer) from
// damage.
var (
	ErrVersion   = errors.New("unknown record format version")
	ErrType      = errors.New("unknown record type")
	ErrTruncated = errors.New("record ends early")
	ErrCorrupt   = errors.New("corrupt record")
)

// DecodeError says what Decode could not read and where.
type DecodeError struct {
	Pos   int    // byte position in the record where reading failed
	Field string // what was being read
	Err   error  // ErrVersion, ErrType, ErrTruncated or ErrCorrupt
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("coordinator record: %s at byte %d: %v", e.Field, e.Pos, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Encode writes r in the current version. It refuses records whose pointer field does not match
// Type, and a Claim record whose header claim differs from its number.
func Encode(r Record) ([]byte, error) {
	return AppendEncode(make([]byte, 0, 64), r)
}

// AppendEncode appends the encoding of r to dst.
func AppendEncode(dst []byte, r Record) ([]byte, error) {
	dst = append(dst, EncodeVersion(&r), byte(r.Type))
	dst = binary.LittleEndian.AppendUint64(dst, r.Claim)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(unixNano(r.Time)))
	var w writer
	w.b = dst
	w.v = EncodeVersion(&r)
	switch r.Type {
	case TypeClaim:
		c := r.ClaimInfo
		if c == nil {
			return nil, errors.New("coordinator record: claim record without ClaimInfo")
		}
		if c.Number != r.Claim {
			return nil, fmt.Errorf("coordinator record: claim number %d differs from the record's claim %d", c.Number, r.Claim)
		}
		w.varint(int64(c.Node))
		w.str(c.Addr)
	case TypeGroup:
		if r.Group == nil {
			return nil, errors.New("coordinator record: group record without Group")
		}
		w.group(r.Group)
	case TypeOffsetCommit:
		o := r.OffsetCommit
		if o == nil {
			return nil, errors.New("coordinator record: offset-commit record without OffsetCommit")
		}
		w.str(o.Group)
		w.str(o.Topic)
		w.offset(o)
	case TypeGroupDeleted:
		if r.GroupDeleted == nil {
			return nil, errors.New("coordinator record: group-deleted record without GroupDeleted")
		}
		w.str(r.GroupDeleted.Group)
	case TypeOffsetDeleted:
		o := r.OffsetDeleted
		if o == nil {
			return nil, errors.New("coordinator record: offset-deleted record without OffsetDeleted")
		}
		w.str(o.Group)
		w.str(o.Topic)
		w.varint(int64(o.Partition))
	case TypeCheckpoint:
		c := r.Checkpoint
		if c == nil {
			return nil, errors.New("coordinator record: checkpoint record without Checkpoint")
		}
		w.uvarint(c.Through)
		w.uvarint(uint64(len(c.Groups)))
		for i := range c.Groups {
			w.group(&c.Groups[i])
		}
		// Offsets go as runs of one (group, topic): a checkpoint of many partitions names each
		// group and topic once per run instead of once per offset, and the order is kept.
		offs := c.Offsets
		w.uvarint(uint64(countRuns(offs)))
		for i := 0; i < len(offs); {
			j := i + 1
			for j < len(offs) && offs[j].Group == offs[i].Group && offs[j].Topic == offs[i].Topic {
				j++
			}
			w.str(offs[i].Group)
			w.str(offs[i].Topic)
			w.uvarint(uint64(j - i))
			for k := i; k < j; k++ {
				w.offset(&offs[k])
			}
			i = j
		}
		w.uvarint(uint64(len(c.ConsumerGroups)))
		for i := range c.ConsumerGroups {
			if len(c.ConsumerGroups[i].Removed) > 0 {
				return nil, errors.New("coordinator record: a checkpoint's consumer group removes members")
			}
			w.cgroup(&c.ConsumerGroups[i])
		}
		if len(c.Transactions) > 0 || w.v >= 5 {
			w.uvarint(uint64(len(c.Transactions)))
			for i := range c.Transactions {
				if err := checkTxn(&c.Transactions[i]); err != nil {
					return nil, err
				}
				w.txn(&c.Transactions[i])
			}
		}
		if w.v >= 5 {
			w.uvarint(uint64(len(c.TxnOffsets)))
			for i := range c.TxnOffsets {
				o := &c.TxnOffsets[i]
				if o.End != TxnOffsetsPending || i > 0 && compareTxnOffsets(&c.TxnOffsets[i-1], o) >= 0 {
					return nil, errors.New("coordinator record: a checkpoint's txn-offsets not pending, not sorted or repeated")
				}
				if err := checkTxnOffsets(o); err != nil {
					return nil, err
				}
				w.txnOffsets(o)
			}
		}
		if w.v >= 6 {
			w.uvarint(uint64(len(c.Topics)))
			for i := range c.Topics {
				if c.Topics[i].Gone() {
					return nil, errors.New("coordinator record: a checkpoint's topic names no incarnation")
				}
				w.topic(&c.Topics[i])
			}
		}
	case TypeTopic:
		if r.Topic == nil {
			return nil, errors.New("coordinator record: topic record without Topic")
		}
		w.topic(r.Topic)
	case TypeTxnOffsets:
		if r.TxnOffsets == nil {
			return nil, errors.New("coordinator record: txn-offsets record without TxnOffsets")
		}
		if err := checkTxnOffsets(r.TxnOffsets); err != nil {
			return nil, err
		}
		w.txnOffsets(r.TxnOffsets)
	case TypeTransaction:
		if r.Transaction == nil {
			return nil, errors.New("coordinator record: transaction record without Transaction")
		}
		if err := checkTxn(r.Transaction); err != nil {
			return nil, err
		}
		w.txn(r.Transaction)
	case TypeConsumerGroup:
		if r.ConsumerGroup == nil {
			return nil, errors.New("coordinator record: consumer-group record without ConsumerGroup")
		}
		w.cgroup(r.ConsumerGroup)
	default:
		return nil, fmt.Errorf("coordinator record: cannot encode type %d", r.Type)
	}
	return w.b, nil
}

func countRuns(offs []OffsetCommit) int {
	n := 0
	for i := range offs {
		if i == 0 || offs[i].Group != offs[i-1].Group || offs[i].Topic != offs[i-1].Topic {
			n++
		}
	}
	return n
}

// Decode reads one record. It never panics: bad input gives a *DecodeError. Trailing bytes after
// the body are corruption, so a record is exactly one message payload.
func Decode(b []byte) (Record, error) {
	var r Record
	h, err := DecodeHeader(b)
	if err != nil {
		return r, err
	}
	r.Type, r.Claim, r.Time = h.Type, h.Claim, h.Time
	d := reader{b: b, pos: HeaderSize, v: h.Version}
	if r.Type == TypeConsumerGroup && h.Version < 2 || r.Type == TypeTransaction && h.Version < 3 || r.Type == TypeTxnOffsets && h.Version < 5 ||
		r.Type == TypeTopic && h.Version < 6 {
		return Record{}, &DecodeError{Pos: 1, Field: fmt.Sprintf("type %d in version %d", b[1], h.Version), Err: ErrType}
	}
	switch r.Type {
	case TypeClaim:
		c := &Claim{Number: r.Claim}
		c.Node = d.i32("claim node")
		c.Addr = d.str("claim addr")
		r.ClaimInfo = c
	case TypeGroup:
		g := new(Group)
		d.group(g)
		r.Group = g
	case TypeOffsetCommit:
		o := new(OffsetCommit)
		o.Group = d.str("offset group")
		o.Topic = d.str("offset topic")
		d.offset(o)
		r.OffsetCommit = o
	case TypeGroupDeleted:
		r.GroupDeleted = &GroupDeleted{Group: d.str("deleted group")}
	case TypeOffsetDeleted:
		o := new(OffsetDeleted)
		o.Group = d.str("deleted offset group")
		o.Topic = d.str("deleted offset topic")
		o.Partition = d.i32("deleted offset partition")
		r.OffsetDeleted = o
	case TypeCheckpoint:
		c := new(Checkpoint)
		c.Through = d.uvarint("checkpoint through")
		ng := d.count("checkpoint groups", 7)
		if ng > 0 {
			c.Groups = make([]Group, ng)
			for i := range c.Groups {
				d.group(&c.Groups[i])
			}
		}
		runs := d.count("checkpoint offset runs", 3)
		for range runs {
			if d.err != nil {
				break
			}
			group := d.str("checkpoint offset group")
			topic := d.str("checkpoint offset topic")
			n := d.count("checkpoint offset run", 4)
			if n == 0 && d.err == nil {
				d.fail("checkpoint offset run", ErrCorrupt)
			}
			for range n {
				if d.err != nil {
					break
				}
				o := OffsetCommit{Group: group, Topic: topic}
				d.offset(&o)
				c.Offsets = append(c.Offsets, o)
			}
		}
		if h.Version >= 2 {
			n := d.count("checkpoint consumer groups", 7)
			if n > 0 {
				c.ConsumerGroups = make([]ConsumerGroup, n)
				for i := range c.ConsumerGroups {
					d.cgroup(&c.ConsumerGroups[i])
					if len(c.ConsumerGroups[i].Removed) > 0 {
						d.fail("checkpoint consumer group removes members", ErrCorrupt)
					}
					if d.err != nil {
						break
					}
				}
			}
		}
		if h.Version >= 3 {
			// A version-3 or 4 checkpoint is one that holds transactions: at least one. A
			// version-5 one holds txn-offsets, and may hold no transaction.
			n := d.count("checkpoint transactions", 8)
			if n == 0 && d.err == nil && h.Version < 5 {
				d.fail("checkpoint transactions", ErrCorrupt)
			}
			for range n {
				if d.err != nil {
					break
				}
				var t Transaction
				d.txn(&t)
				c.Transactions = append(c.Transactions, t)
			}
		}
		if h.Version >= 5 {
			// A version-5 checkpoint is one that holds txn-offsets: at least one. A version-6
			// one holds topics, and may hold no txn-offsets.
			n := d.count("checkpoint txn-offsets", 6)
			if n == 0 && d.err == nil && h.Version < 6 {
				d.fail("checkpoint txn-offsets", ErrCorrupt)
			}
			for range n {
				if d.err != nil {
					break
				}
				var o TxnOffsets
				d.txnOffsets(&o)
				if d.err == nil && (o.End != TxnOffsetsPending || len(c.TxnOffsets) > 0 && compareTxnOffsets(&c.TxnOffsets[len(c.TxnOffsets)-1], &o) >= 0) {
					d.fail("checkpoint txn-offsets order", ErrCorrupt)
				}
				c.TxnOffsets = append(c.TxnOffsets, o)
			}
		}
		if h.Version >= 6 {
			n := d.count("checkpoint topics", 3)
			for range n {
				if d.err != nil {
					break
				}
				var t TopicIncarnation
				d.topic(&t)
				if t.Gone() && d.err == nil {
					d.fail("checkpoint topic without incarnation", ErrCorrupt)
				}
				c.Topics = append(c.Topics, t)
			}
		}
		r.Checkpoint = c
	case TypeConsumerGroup:
		g := new(ConsumerGroup)
		d.cgroup(g)
		r.ConsumerGroup = g
	case TypeTransaction:
		t := new(Transaction)
		d.txn(t)
		r.Transaction = t
	case TypeTxnOffsets:
		o := new(TxnOffsets)
		d.txnOffsets(o)
		r.TxnOffsets = o
	case TypeTopic:
		t := new(TopicIncarnation)
		d.topic(t)
		r.Topic = t
	default:
		return Record{}, &DecodeError{Pos: 1, Field: fmt.Sprintf("type %d", b[1]), Err: ErrType}
	}
	if d.err != nil {
		return Record{}, d.err
	}
	if d.pos != len(b) {
		return Record{}, &DecodeError{Pos: d.pos, Field: fmt.Sprintf("%d bytes after the body", len(b)-d.pos), Err: ErrCorrupt}
	}
	return r, nil
}

// unixNano maps the zero time to 0 so an unset time survives a round trip.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

type writer struct {
	b []byte
	v uint8 // the format version written
}

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }

// bytes keeps nil apart from empty (length+1, 0 for nil): a member's metadata and assignment
// come back exactly as the client sent them.
func (w *writer) bytes(p []byte) {
	if p == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(p)) + 1)
	w.b = append(w.b, p...)
}

func (w *writer) group(g *Group) {
	w.str(g.Name)
	w.varint(int64(g.Generation))
	w.str(g.ProtocolType)
	w.str(g.Protocol)
	w.str(g.Leader)
	w.str(g.State)
	w.uvarint(uint64(len(g.Members)))
	for i := range g.Members {
		m := &g.Members[i]
		w.str(m.MemberID)
		w.str(m.InstanceID)
		w.str(m.ClientID)
		w.str(m.ClientHost)
		w.varint(int64(m.SessionTimeout))
		w.varint(int64(m.RebalanceTimeout))
		w.uvarint(uint64(len(m.Protocols)))
		for _, p := range m.Protocols {
			w.str(p.Name)
			w.bytes(p.Metadata)
		}
		w.bytes(m.Assignment)
	}
}

func (w *writer) cgroup(g *ConsumerGroup) {
	w.str(g.Name)
	w.varint(int64(g.Epoch))
	w.varint(int64(g.AssignmentEpoch))
	w.uvarint(uint64(len(g.Topics)))
	for _, t := range g.Topics {
		w.str(t.Name)
		w.b = append(w.b, t.ID[:]...)
		w.varint(int64(t.Partitions))
	}
	w.uvarint(uint64(len(g.Members)))
	for i := range g.Members {
		m := &g.Members[i]
		w.str(m.MemberID)
		w.str(m.InstanceID)
		w.str(m.RackID)
		w.str(m.ClientID)
		w.str(m.ClientHost)
		w.varint(int64(m.RebalanceTimeout))
		w.uvarint(uint64(len(m.SubscribedTopics)))
		for _, t := range m.SubscribedTopics {
			w.str(t)
		}
		w.str(m.SubscribedRegex)
		w.str(m.ServerAssignor)
		w.varint(int64(m.Epoch))
		w.varint(int64(m.PreviousEpoch))
		w.b = append(w.b, byte(m.State))
		w.assignment(m.Assigned)
		w.assignment(m.PendingRevocation)
		w.assignment(m.Target)
	}
	w.uvarint(uint64(len(g.Removed)))
	for _, id := range g.Removed {
		w.str(id)
	}
}

func (w *writer) assignment(a Assignment) {
	w.uvarint(uint64(len(a)))
	for _, tp := range a {
		w.b = append(w.b, tp.TopicID[:]...)
		w.uvarint(uint64(len(tp.Partitions)))
		for _, p := range tp.Partitions {
			w.varint(int64(p))
		}
		w.uvarint(uint64(len(tp.Epochs)))
		for _, e := range tp.Epochs {
			w.varint(int64(e))
		}
	}
}

func (w *writer) offset(o *OffsetCommit) {
	w.varint(int64(o.Partition))
	w.varint(o.Offset)
	w.varint(int64(o.LeaderEpoch))
	w.str(o.Metadata)
	w.varint(unixNano(o.Expire))
}

type reader struct {
	b   []byte
	pos int
	v   uint8 // the record's format version
	err *DecodeError
}

func (d *reader) fail(field string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Pos: d.pos, Field: field, Err: err}
	}
}

func (d *reader) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.pos:])
	if !d.took(field, n) {
		return 0
	}
	return v
}

func (d *reader) varint(field string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.pos:])
	if !d.took(field, n) {
		return 0
	}
	return v
}

// took moves past a varint of n bytes as encoding/binary reports it: 0 means the bytes ran
// out, below 0 an overflow.
func (d *reader) took(field string, n int) bool {
	switch {
	case n == 0:
		d.fail(field, ErrTruncated)
	case n < 0:
		d.fail(field, ErrCorrupt)
	default:
		d.pos += n
		return true
	}
	return false
}

func (d *reader) i32(field string) int32 {
	v := d.varint(field)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(field, ErrCorrupt)
		return 0
	}
	return int32(v)
}

// count reads an element count and refuses one that the remaining bytes cannot hold at min
// bytes per element, so a corrupt count cannot make Decode allocate without bound.
func (d *reader) count(field string, min int) int {
	v := d.uvarint(field)
	if d.err != nil {
		return 0
	}
	if v > uint64(len(d.b)-d.pos)/uint64(min) {
		d.fail(field, ErrCorrupt)
		return 0
	}
	return int(v)
}

func (d *reader) raw(field string, n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.pos) {
		d.fail(field, ErrTruncated)
		return nil
	}
	p := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return p
}

func (d *reader) str(field string) string {
	n := d.uvarint(field)
	return string(d.raw(field, n))
}

func (d *reader) bytes(field string) []byte {
	n := d.uvarint(field)
	if d.err != nil || n == 0 {
		return nil
	}
	p := d.raw(field, n-1)
	if d.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(p)), p...)
}

func (d *reader) group(g *Group) {
	g.Name = d.str("group name")
	g.Generation = d.i32("group generation")
	g.ProtocolType = d.str("group protocol type")
	g.Protocol = d.str("group protocol")
	g.Leader = d.str("group leader")
	g.State = d.str("group state")
	n := d.count("group members", 8)
	if n == 0 {
		return
	}
	g.Members = make([]Member, n)
	for i := range g.Members {
		if d.err != nil {
			g.Members = nil
			return
		}
		m := &g.Members[i]
		m.MemberID = d.str("member id")
		m.InstanceID = d.str("member instance id")
		m.ClientID = d.str("member client id")
		m.ClientHost = d.str("member client host")
		m.SessionTimeout = time.Duration(d.varint("member session timeout"))
		m.RebalanceTimeout = time.Duration(d.varint("member rebalance timeout"))
		np := d.count("member protocols", 2)
		if np > 0 {
			m.Protocols = make([]Protocol, np)
			for j := range m.Protocols {
				m.Protocols[j].Name = d.str("protocol name")
				m.Protocols[j].Metadata = d.bytes("protocol metadata")
			}
		}
		m.Assignment = d.bytes("member assignment")
	}
}

func (d *reader) cgroup(g *ConsumerGroup) {
	g.Name = d.str("consumer group name")
	g.Epoch = d.i32("consumer group epoch")
	g.AssignmentEpoch = d.i32("consumer group assignment epoch")
	if n := d.count("consumer group topics", 18); n > 0 {
		g.Topics = make([]TopicMeta, n)
		for i := range g.Topics {
			t := &g.Topics[i]
			t.Name = d.str("consumer group topic name")
			copy(t.ID[:], d.raw("consumer group topic id", 16))
			t.Partitions = d.i32("consumer group topic partitions")
			if d.err != nil {
				g.Topics = nil
				return
			}
		}
	}
	if n := d.count("consumer group members", 16); n > 0 {
		g.Members = make([]ConsumerMember, n)
		for i := range g.Members {
			d.cmember(&g.Members[i])
			if d.err != nil {
				g.Members = nil
				return
			}
		}
	}
	if n := d.count("consumer group removed members", 1); n > 0 {
		g.Removed = make([]string, n)
		for i := range g.Removed {
			g.Removed[i] = d.str("consumer group removed member")
		}
	}
}

func (d *reader) cmember(m *ConsumerMember) {
	m.MemberID = d.str("consumer member id")
	m.InstanceID = d.str("consumer member instance id")
	m.RackID = d.str("consumer member rack id")
	m.ClientID = d.str("consumer member client id")
	m.ClientHost = d.str("consumer member client host")
	m.RebalanceTimeout = time.Duration(d.varint("consumer member rebalance timeout"))
	if n := d.count("consumer member subscribed topics", 1); n > 0 {
		m.SubscribedTopics = make([]string, n)
		for i := range m.SubscribedTopics {
			m.SubscribedTopics[i] = d.str("consumer member subscribed topic")
		}
	}
	m.SubscribedRegex = d.str("consumer member subscribed regex")
	m.ServerAssignor = d.str("consumer member server assignor")
	m.Epoch = d.i32("consumer member epoch")
	m.PreviousEpoch = d.i32("consumer member previous epoch")
	if st := d.raw("consumer member state", 1); d.err == nil {
		m.State = MemberState(st[0])
		if m.State > MemberUnreleasedPartitions {
			d.pos--
			d.fail("consumer member state", ErrCorrupt)
		}
	}
	m.Assigned = d.assignment("consumer member assigned")
	m.PendingRevocation = d.assignment("consumer member pending revocation")
	m.Target = d.assignment("consumer member target")
}

func (d *reader) assignment(field string) Assignment {
	n := d.count(field, 18)
	if n == 0 {
		return nil
	}
	a := make(Assignment, n)
	for i := range a {
		copy(a[i].TopicID[:], d.raw(field+" topic id", 16))
		np := d.count(field+" partitions", 1)
		if np == 0 && d.err == nil {
			d.fail(field+" partitions", ErrCorrupt)
		}
		if d.err != nil {
			return nil
		}
		a[i].Partitions = make([]int32, np)
		for j := range a[i].Partitions {
			a[i].Partitions[j] = d.i32(field + " partition")
		}
		ne := d.count(field+" epochs", 1)
		if ne != 0 && ne != np && d.err == nil {
			d.fail(field+" epochs", ErrCorrupt)
		}
		if ne > 0 && d.err == nil {
			a[i].Epochs = make([]int32, ne)
			for j := range a[i].Epochs {
				a[i].Epochs[j] = d.i32(field + " epoch")
			}
		}
		if d.err != nil {
			return nil
		}
	}
	return a
}

func (d *reader) offset(o *OffsetCommit) {
	o.Partition = d.i32("offset partition")
	o.Offset = d.varint("offset")
	o.LeaderEpoch = d.i32("offset leader epoch")
	o.Metadata = d.str("offset metadata")
	o.Expire = fromUnixNano(d.varint("offset expire"))
}

// checkTxn refuses a transaction Decode would not read back as it is: an unknown state, an
// empty topic, partitions or groups out of order or repeated.
func checkTxn(t *Transaction) error {
	if t.State > TxnDead {
		return fmt.Errorf("coordinator record: transaction %q has unknown state %d", t.ID, t.State)
	}
	for i, tp := range t.Partitions {
		if len(tp.Partitions) == 0 || i > 0 && t.Partitions[i-1].Topic >= tp.Topic {
			return fmt.Errorf("coordinator record: transaction %q: topics not sorted, repeated or empty", t.ID)
		}
		for j := 1; j < len(tp.Partitions); j++ {
			if tp.Partitions[j-1] >= tp.Partitions[j] {
				return fmt.Errorf("coordinator record: transaction %q: partitions of %s not sorted or repeated", t.ID, tp.Topic)
			}
		}
	}
	for i := 1; i < len(t.Groups); i++ {
		if t.Groups[i-1] >= t.Groups[i] {
			return fmt.Errorf("coordinator record: transaction %q: groups not sorted or repeated", t.ID)
		}
	}
	for i := 1; i < len(t.Offsets); i++ {
		if CompareTxnOffset(&t.Offsets[i-1], &t.Offsets[i]) >= 0 {
			return fmt.Errorf("coordinator record: transaction %q: staged offsets not sorted or repeated", t.ID)
		}
	}
	for _, p := range []*ProducerEpoch{t.Last, t.Next} {
		if p != nil && (p.ProducerID < 0 || p.Epoch < 0) {
			return fmt.Errorf("coordinator record: transaction %q: negative last or next producer", t.ID)
		}
	}
	return nil
}

func (w *writer) txn(t *Transaction) {
	w.str(t.ID)
	w.varint(t.ProducerID)
	w.varint(int64(t.Epoch))
	w.varint(int64(t.Timeout))
	w.b = append(w.b, byte(t.State))
	w.uvarint(uint64(len(t.Partitions)))
	for _, tp := range t.Partitions {
		w.str(tp.Topic)
		w.uvarint(uint64(len(tp.Partitions)))
		for _, p := range tp.Partitions {
			w.varint(int64(p))
		}
	}
	w.uvarint(uint64(len(t.Groups)))
	for _, g := range t.Groups {
		w.str(g)
	}
	w.varint(unixNano(t.Started))
	w.varint(unixNano(t.Updated))
	if w.v >= 4 {
		w.uvarint(uint64(len(t.Offsets)))
		for i := range t.Offsets {
			o := &t.Offsets[i]
			w.str(o.Group)
			w.str(o.Topic)
			w.varint(int64(o.Partition))
			w.varint(o.Offset)
			w.varint(int64(o.LeaderEpoch))
			w.str(o.Metadata)
		}
	}
	if w.v >= 7 {
		w.producer(t.Last)
		w.producer(t.Next)
	}
}

// producer writes an optional producer: u8 0 none, or 1, varint producer id, varint epoch.
func (w *writer) producer(p *ProducerEpoch) {
	if p == nil {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.varint(p.ProducerID)
	w.varint(int64(p.Epoch))
}

func (d *reader) producer(field string) *ProducerEpoch {
	b := d.raw(field, 1)
	if d.err != nil {
		return nil
	}
	switch b[0] {
	case 0:
		return nil
	case 1:
	default:
		d.pos--
		d.fail(field, ErrCorrupt)
		return nil
	}
	p := &ProducerEpoch{ProducerID: d.varint(field + " id")}
	if e := d.i32(field + " epoch"); e < 0 || e > math.MaxInt16 || p.ProducerID < 0 {
		d.fail(field, ErrCorrupt)
		return nil
	} else {
		p.Epoch = int16(e)
	}
	if d.err != nil {
		return nil
	}
	return p
}

func (d *reader) txn(t *Transaction) {
	t.ID = d.str("transaction id")
	t.ProducerID = d.varint("transaction producer id")
	if e := d.i32("transaction epoch"); e < math.MinInt16 || e > math.MaxInt16 {
		d.fail("transaction epoch", ErrCorrupt)
	} else {
		t.Epoch = int16(e)
	}
	t.Timeout = time.Duration(d.varint("transaction timeout"))
	if st := d.raw("transaction state", 1); d.err == nil {
		t.State = TxnState(st[0])
		if t.State > TxnDead {
			d.pos--
			d.fail("transaction state", ErrCorrupt)
		}
	}
	if n := d.count("transaction topics", 3); n > 0 {
		t.Partitions = make([]TxnTopic, n)
		for i := range t.Partitions {
			tp := &t.Partitions[i]
			tp.Topic = d.str("transaction topic")
			np := d.count("transaction partitions", 1)
			if np == 0 && d.err == nil {
				d.fail("transaction partitions", ErrCorrupt)
			}
			if d.err != nil {
				t.Partitions = nil
				return
			}
			tp.Partitions = make([]int32, np)
			for j := range tp.Partitions {
				tp.Partitions[j] = d.i32("transaction partition")
			}
		}
	}
	if n := d.count("transaction groups", 1); n > 0 {
		t.Groups = make([]string, n)
		for i := range t.Groups {
			t.Groups[i] = d.str("transaction group")
		}
	}
	t.Started = fromUnixNano(d.varint("transaction started"))
	t.Updated = fromUnixNano(d.varint("transaction updated"))
	if d.v >= 4 {
		if n := d.count("transaction offsets", 6); n > 0 {
			t.Offsets = make([]TxnOffset, n)
			for i := range t.Offsets {
				o := &t.Offsets[i]
				o.Group = d.str("staged offset group")
				o.Topic = d.str("staged offset topic")
				o.Partition = d.i32("staged offset partition")
				o.Offset = d.varint("staged offset")
				o.LeaderEpoch = d.i32("staged offset leader epoch")
				o.Metadata = d.str("staged offset metadata")
				if d.err != nil {
					t.Offsets = nil
					return
				}
			}
		}
	}
	if d.v >= 7 {
		t.Last = d.producer("transaction last producer")
		t.Next = d.producer("transaction next producer")
	}
	if d.err == nil && checkTxn(t) != nil {
		d.fail("transaction order", ErrCorrupt)
	}
}

// compareTxnOffsets orders txn-offsets by group, then producer id (a checkpoint's order).
func compareTxnOffsets(a, b *TxnOffsets) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return cmp.Compare(a.ProducerID, b.ProducerID)
}

// checkTxnOffsets refuses txn-offsets Decode would not read back as they are: an unknown end,
// an end with offsets, offsets of another group, out of order or repeated.
func checkTxnOffsets(o *TxnOffsets) error {
	if o.End > TxnOffsetsAbort {
		return fmt.Errorf("coordinator record: txn-offsets of group %q: unknown end %d", o.Group, o.End)
	}
	if o.End != TxnOffsetsPending && len(o.Offsets) > 0 {
		return fmt.Errorf("coordinator record: txn-offsets of group %q: an end holds no offsets", o.Group)
	}
	for i := range o.Offsets {
		if o.Offsets[i].Group != o.Group {
			return fmt.Errorf("coordinator record: txn-offsets of group %q hold an offset of group %q", o.Group, o.Offsets[i].Group)
		}
		if i > 0 && CompareTxnOffset(&o.Offsets[i-1], &o.Offsets[i]) >= 0 {
			return fmt.Errorf("coordinator record: txn-offsets of group %q: offsets not sorted or repeated", o.Group)
		}
	}
	return nil
}

func (w *writer) txnOffsets(o *TxnOffsets) {
	w.str(o.Group)
	w.str(o.TransactionalID)
	w.varint(o.ProducerID)
	w.varint(int64(o.Epoch))
	w.b = append(w.b, byte(o.End))
	w.uvarint(uint64(len(o.Offsets)))
	for i := range o.Offsets {
		x := &o.Offsets[i]
		w.str(x.Topic)
		w.varint(int64(x.Partition))
		w.varint(x.Offset)
		w.varint(int64(x.LeaderEpoch))
		w.str(x.Metadata)
	}
}

func (d *reader) txnOffsets(o *TxnOffsets) {
	o.Group = d.str("txn-offsets group")
	o.TransactionalID = d.str("txn-offsets transactional id")
	o.ProducerID = d.varint("txn-offsets producer id")
	if e := d.i32("txn-offsets epoch"); e < math.MinInt16 || e > math.MaxInt16 {
		d.fail("txn-offsets epoch", ErrCorrupt)
	} else {
		o.Epoch = int16(e)
	}
	if end := d.raw("txn-offsets end", 1); d.err == nil {
		o.End = TxnOffsetsEnd(end[0])
	}
	if n := d.count("txn-offsets offsets", 5); n > 0 {
		o.Offsets = make([]TxnOffset, n)
		for i := range o.Offsets {
			x := &o.Offsets[i]
			x.Group = o.Group
			x.Topic = d.str("txn-offsets topic")
			x.Partition = d.i32("txn-offsets partition")
			x.Offset = d.varint("txn-offsets offset")
			x.LeaderEpoch = d.i32("txn-offsets leader epoch")
			x.Metadata = d.str("txn-offsets metadata")
			if d.err != nil {
				o.Offsets = nil
				return
			}
		}
	}
	if d.err == nil && checkTxnOffsets(o) != nil {
		d.fail("txn-offsets", ErrCorrupt)
	}
}

// topic: string name, uvarint Iggy topic id, uvarint creation time (microseconds).
func (w *writer) topic(t *TopicIncarnation) {
	w.str(t.Name)
	w.uvarint(uint64(t.ID))
	w.uvarint(t.Created)
}

func (d *reader) topic(t *TopicIncarnation) {
	t.Name = d.str("topic name")
	id := d.uvarint("topic id")
	if id > math.MaxUint32 && d.err == nil {
		d.fail("topic id", ErrCorrupt)
	}
	t.ID = uint32(id)
	t.Created = d.uvarint("topic created")
}
