package record

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Validity is the log's validity rule and nothing else: which records of one partition, given in
// log order, are valid. State folds with it, and readers that need no group state (a scan of a
// million records) use it alone, so there is one rule for every reader.
//
// A claim is valid when its number is above every claim before it and it names its node; it
// becomes the newest claim. Any other record is valid only when it carries the newest claim and
// its body is the one its type needs. The one exception is a checkpoint given first, which is how
// a reader starts at a checkpoint: its claim becomes the newest. Not safe for concurrent use.
type Validity struct {
	claim   uint64
	applied uint64
}

// Apply decides whether r, the next record in log order, is valid, and takes it into account.
func (v *Validity) Apply(r *Record) bool {
	first := v.applied == 0
	v.applied++
	if r.Type == TypeClaim {
		if r.ClaimInfo == nil || r.Claim <= v.claim {
			return false
		}
		v.claim = r.Claim
		return true
	}
	firstCheckpoint := first && r.Type == TypeCheckpoint && v.claim == 0
	if r.Claim != v.claim && !firstCheckpoint {
		return false
	}
	var ok bool
	switch r.Type {
	case TypeGroup:
		ok = r.Group != nil
	case TypeOffsetCommit:
		ok = r.OffsetCommit != nil
	case TypeGroupDeleted:
		ok = r.GroupDeleted != nil
	case TypeOffsetDeleted:
		ok = r.OffsetDeleted != nil
	case TypeCheckpoint:
		ok = r.Checkpoint != nil
		if ok && firstCheckpoint {
			v.claim = r.Claim
		}
	case TypeConsumerGroup:
		ok = r.ConsumerGroup != nil
	case TypeTransaction:
		ok = r.Transaction != nil
	case TypeTopic:
		ok = r.Topic != nil
	case TypeTxnOffsets:
		ok = r.TxnOffsets != nil
	}
	return ok
}

// Claim is the newest valid claim number so far (0: none).
func (v *Validity) Claim() uint64 { return v.claim }

// Header is the fixed part of a record: what a scan reads without decoding the body.
type Header struct {
	Version uint8
	Type    Type
	Claim   uint64
	Time    time.Time
}

// DecodeHeader reads the header of a record. A record shorter than HeaderSize or of a version
// outside MinVersion..Version is a *DecodeError, as Decode reports it.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) == 0 {
		return Header{}, &DecodeError{Pos: 0, Field: "version", Err: ErrTruncated}
	}
	if b[0] < MinVersion || b[0] > Version {
		return Header{Version: b[0]}, &DecodeError{Pos: 0, Field: fmt.Sprintf("version %d", b[0]), Err: ErrVersion}
	}
	if len(b) < HeaderSize {
		return Header{}, &DecodeError{Pos: len(b), Field: "header", Err: ErrTruncated}
	}
	return Header{Version: b[0], Type: Type(b[1]), Claim: binary.LittleEndian.Uint64(b[2:10]),
		Time: fromUnixNano(int64(binary.LittleEndian.Uint64(b[10:18])))}, nil
}
