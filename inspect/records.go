package inspect

import (
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
	// Fields are the record's decoded fields as key=value text, the same in every format.
	Fields string `json:"fields"`
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
	fields := r.Fields
	if r.Error != "" {
		fields = "error=" + strconv.Quote(r.Error)
	}
	return []string{strconv.Itoa(r.Partition), strconv.FormatUint(r.Offset, 10), t, claim, valid, r.Type, r.Group, fields}
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
	b = appendJSONString(b, r.Fields)
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
		return row
	}
	r := &e.Record
	row.Time, row.Claim, row.Valid, row.Type = r.Time, r.Claim, valid, r.Type.String()
	row.Group = RecordGroup(r)
	row.Fields = Fields(r)
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
	}
	return ""
}

// Fields is a record's body as space-separated key=value pairs, values quoted where they hold
// blanks, quotes or non-printable bytes.
func Fields(r *record.Record) string {
	var buf [160]byte
	return string(AppendFields(buf[:0], r))
}

// AppendFields appends what Fields returns to dst.
func AppendFields(dst []byte, r *record.Record) []byte {
	f := fieldList{b: dst, start: len(dst)}
	switch r.Type {
	case record.TypeClaim:
		if c := r.ClaimInfo; c != nil {
			f.uint("number", c.Number)
			f.int("node", int64(c.Node))
			f.str("addr", c.Addr)
		}
	case record.TypeGroup:
		if g := r.Group; g != nil {
			f.int("generation", int64(g.Generation))
			f.str("state", g.State)
			f.str("protocol_type", g.ProtocolType)
			f.str("protocol", g.Protocol)
			f.str("leader", g.Leader)
			f.int("members", int64(len(g.Members)))
		}
	case record.TypeOffsetCommit:
		if o := r.OffsetCommit; o != nil {
			f.str("topic", o.Topic)
			f.int("partition", int64(o.Partition))
			f.int("offset", o.Offset)
			f.int("leader_epoch", int64(o.LeaderEpoch))
			if o.Metadata != "" {
				f.str("metadata", o.Metadata)
			}
			if !o.Expire.IsZero() {
				f.str("expire", o.Expire.UTC().Format(time.RFC3339))
			}
		}
	case record.TypeOffsetDeleted:
		if o := r.OffsetDeleted; o != nil {
			f.str("topic", o.Topic)
			f.int("partition", int64(o.Partition))
		}
	case record.TypeCheckpoint:
		if c := r.Checkpoint; c != nil {
			f.uint("through", c.Through)
			f.int("groups", int64(len(c.Groups)))
			f.int("offsets", int64(len(c.Offsets)))
		}
	}
	return f.b
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
