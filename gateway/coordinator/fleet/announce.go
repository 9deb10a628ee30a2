package fleet

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// Announcement is what a gateway appends to OwnersTopic every announce interval and whenever its
// partitions change: who it is, where clients reach it, which log partitions it coordinates under
// which claims, which it released, whether it is leaving or drained, its lease membership and
// its version.
//
// Encoding. All versions start alike: u8 version, varint node, string addr (uvarint length +
// bytes), i64 LE time (Unix ns, the writer's clock), u8 leaving (0 or 1), uvarint count, then
// count pairs of uvarint partition (below 16) and uvarint claim.
//   - Version 1 ends there.
//   - Version 2 adds the released partitions in the same form (count at least 1).
//   - Version 3 adds the released partitions (count may be 0), then u8 draining (always 1).
//   - Version 4, the one written now, adds the released partitions (count may be 0), u8 draining
//     (0 or 1), uvarint lease member (the Iggy member id of its LeaseGroup membership plus 1; 0
//     for none) and string version (the gateway's release, "" when unknown).
//
// A record ends exactly where its last field ends; anything else is ErrAnnouncement.
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
	// Member is the gateway's Iggy member id in LeaseGroup; HasMember is false when it is not a
	// member (drained, leaving, joining) and while it stands down for a slow link to Iggy (it
	// stays a member, but no lease counts a member that no announcement names). Lease maps
	// member ids to partitions, so operators map the lease to nodes through this.
	Member    uint32
	HasMember bool
	// Version is the gateway's release ("" when unknown, and in versions 1-3).
	Version string
}

// FormatVersion is the announcement version Encode writes.
const FormatVersion = 4

// ErrAnnouncement is an OwnersTopic message that is not an announcement; every reader skips it.
var ErrAnnouncement = errors.New("fleet: corrupt owner announcement")

// EncodeAnnouncement writes a in FormatVersion.
func EncodeAnnouncement(a Announcement) []byte {
	b := []byte{FormatVersion}
	b = binary.AppendVarint(b, int64(a.Node))
	b = binary.AppendUvarint(b, uint64(len(a.Addr)))
	b = append(b, a.Addr...)
	b = binary.LittleEndian.AppendUint64(b, uint64(a.Time.UnixNano()))
	b = append(b, flag(a.Leaving))
	b = appendPartitionClaims(b, a.Claims)
	b = appendPartitionClaims(b, a.Released)
	b = append(b, flag(a.Draining))
	member := uint64(0)
	if a.HasMember {
		member = uint64(a.Member) + 1
	}
	b = binary.AppendUvarint(b, member)
	b = binary.AppendUvarint(b, uint64(len(a.Version)))
	return append(b, a.Version...)
}

func flag(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendPartitionClaims(b []byte, m map[int]uint64) []byte {
	n := 0
	for p := range Partitions {
		if _, ok := m[p]; ok {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for p := range Partitions {
		if c, ok := m[p]; ok {
			b = binary.AppendUvarint(b, uint64(p))
			b = binary.AppendUvarint(b, c)
		}
	}
	return b
}

// DecodeAnnouncement reads one OwnersTopic message of any version; corrupt bytes are
// ErrAnnouncement, never a panic.
func DecodeAnnouncement(b []byte) (Announcement, error) {
	var a Announcement
	if len(b) < 1 || b[0] < 1 || b[0] > FormatVersion {
		return a, ErrAnnouncement
	}
	version := b[0]
	pos := 1
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, false
		}
		pos += n
		return v, true
	}
	str := func() (string, bool) {
		l, ok := uv()
		if !ok || l > uint64(len(b)-pos) {
			return "", false
		}
		s := string(b[pos : pos+int(l)])
		pos += int(l)
		return s, true
	}
	u8 := func() (bool, bool) {
		if pos >= len(b) || b[pos] > 1 {
			return false, false
		}
		pos++
		return b[pos-1] == 1, true
	}
	claims := func() (map[int]uint64, bool) {
		count, ok := uv()
		if !ok || count > Partitions {
			return nil, false
		}
		m := make(map[int]uint64, count)
		for range count {
			p, ok1 := uv()
			c, ok2 := uv()
			if !ok1 || !ok2 || p >= Partitions {
				return nil, false
			}
			m[int(p)] = c
		}
		return m, true
	}
	node, n := binary.Varint(b[pos:])
	if n <= 0 || node < math.MinInt32 || node > math.MaxInt32 {
		return Announcement{}, ErrAnnouncement
	}
	pos += n
	a.Node = int32(node)
	var ok bool
	if a.Addr, ok = str(); !ok || len(b)-pos < 8 {
		return Announcement{}, ErrAnnouncement
	}
	a.Time = time.Unix(0, int64(binary.LittleEndian.Uint64(b[pos:]))).UTC()
	pos += 8
	if a.Leaving, ok = u8(); !ok {
		return Announcement{}, ErrAnnouncement
	}
	if a.Claims, ok = claims(); !ok {
		return Announcement{}, ErrAnnouncement
	}
	if version >= 2 {
		if a.Released, ok = claims(); !ok || version == 2 && len(a.Released) == 0 {
			return Announcement{}, ErrAnnouncement
		}
		if len(a.Released) == 0 {
			a.Released = nil
		}
	}
	switch version {
	case 3:
		if pos >= len(b) || b[pos] != 1 {
			return Announcement{}, ErrAnnouncement
		}
		a.Draining = true
		pos++
	case 4:
		if a.Draining, ok = u8(); !ok {
			return Announcement{}, ErrAnnouncement
		}
		m, ok := uv()
		if !ok || m > math.MaxUint32+1 {
			return Announcement{}, ErrAnnouncement
		}
		if m > 0 {
			a.Member, a.HasMember = uint32(m-1), true
		}
		if a.Version, ok = str(); !ok {
			return Announcement{}, ErrAnnouncement
		}
	}
	if pos != len(b) {
		return Announcement{}, ErrAnnouncement
	}
	return a, nil
}
