package coordinator

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// Announcement is what a gateway appends to `coordinator_owners`: who it is, where clients reach
// it, which log partitions it coordinates under which claims, and whether it is leaving.
//
// Encoding (version 1): u8 version, varint node, string addr (uvarint length + bytes), i64 LE
// time (Unix ns), u8 leaving (0 or 1), uvarint count, then count pairs of uvarint partition
// (below 16) and uvarint claim. Version 2 is version 1 followed by the released partitions in
// the same form (uvarint count, at least 1, then pairs of partition and claim); it is written
// only when Released is not empty, so a reader that knows version 1 alone skips exactly the
// announcements that carry releases. Version 3 is version 1, then the released partitions in the
// same form but with a count that may be 0, then u8 draining (always 1); it is written only when
// Draining is true, so a reader of versions 1 and 2 skips exactly the announcements of drained
// gateways (it then holds them not live, which is what they are for coordination).
type Announcement struct {
	Node    int32
	Addr    string
	Time    time.Time
	Leaving bool
	Claims  map[int]uint64 // log partition -> claim number
	// Released lists log partitions this gateway stopped serving for good, with the highest
	// claim it stopped under: a gateway that gains one of them after a claim listed here
	// serves as soon as its own claim is read back.
	Released map[int]uint64
	// Draining says an operator drained this gateway: it serves no coordinator partition and
	// leads no partition in Metadata, but is live and serves produce and fetch.
	Draining bool
}

var errAnnouncement = errors.New("coordinator: corrupt owner announcement")

func encodeAnnouncement(a Announcement) []byte {
	version := byte(1)
	switch {
	case a.Draining:
		version = 3
	case len(a.Released) > 0:
		version = 2
	}
	b := []byte{version}
	b = binary.AppendVarint(b, int64(a.Node))
	b = binary.AppendUvarint(b, uint64(len(a.Addr)))
	b = append(b, a.Addr...)
	b = binary.LittleEndian.AppendUint64(b, uint64(a.Time.UnixNano()))
	leaving := byte(0)
	if a.Leaving {
		leaving = 1
	}
	b = append(b, leaving)
	b = appendPartitionClaims(b, a.Claims)
	if version >= 2 {
		b = appendPartitionClaims(b, a.Released)
	}
	if version == 3 {
		b = append(b, 1)
	}
	return b
}

func appendPartitionClaims(b []byte, m map[int]uint64) []byte {
	n := 0
	for p := range record.Partitions {
		if _, ok := m[p]; ok {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for p := range record.Partitions {
		if c, ok := m[p]; ok {
			b = binary.AppendUvarint(b, uint64(p))
			b = binary.AppendUvarint(b, c)
		}
	}
	return b
}

func decodeAnnouncement(b []byte) (Announcement, error) {
	var a Announcement
	if len(b) < 1 || b[0] < 1 || b[0] > 3 {
		return a, errAnnouncement
	}
	pos := 1
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, false
		}
		pos += n
		return v, true
	}
	node, n := binary.Varint(b[pos:])
	if n <= 0 || node < math.MinInt32 || node > math.MaxInt32 {
		return a, errAnnouncement
	}
	pos += n
	a.Node = int32(node)
	l, ok := uv()
	if !ok || l > uint64(len(b)-pos) {
		return a, errAnnouncement
	}
	a.Addr = string(b[pos : pos+int(l)])
	pos += int(l)
	if len(b)-pos < 9 {
		return a, errAnnouncement
	}
	a.Time = time.Unix(0, int64(binary.LittleEndian.Uint64(b[pos:]))).UTC()
	pos += 8
	if b[pos] > 1 {
		return a, errAnnouncement
	}
	a.Leaving = b[pos] == 1
	pos++
	claims := func() (map[int]uint64, bool) {
		count, ok := uv()
		if !ok || count > record.Partitions {
			return nil, false
		}
		m := make(map[int]uint64, count)
		for range count {
			p, ok1 := uv()
			c, ok2 := uv()
			if !ok1 || !ok2 || p >= record.Partitions {
				return nil, false
			}
			m[int(p)] = c
		}
		return m, true
	}
	if a.Claims, ok = claims(); !ok {
		return Announcement{}, errAnnouncement
	}
	switch b[0] {
	case 2:
		if a.Released, ok = claims(); !ok || len(a.Released) == 0 {
			return Announcement{}, errAnnouncement
		}
	case 3:
		if a.Released, ok = claims(); !ok {
			return Announcement{}, errAnnouncement
		}
		if len(a.Released) == 0 {
			a.Released = nil
		}
		if pos >= len(b) || b[pos] != 1 {
			return Announcement{}, errAnnouncement
		}
		a.Draining = true
		pos++
	}
	if pos != len(b) {
		return Announcement{}, errAnnouncement
	}
	return a, nil
}
