package fleet

import (
	"reflect"
	"testing"
	"time"
)

// Every version ever written still decodes, byte for byte as it was written; version 4 round
// trips every field.
func TestAnnouncementVersions(t *testing.T) {
	head := []byte{6, 6, 'h', ':', '9', '0', '9', '2', 0x02, 0xca, 0x9a, 0x3b, 0, 0, 0, 0} // node 3, addr, time 1 s + 2 ns
	at := time.Unix(1, 2).UTC()
	for _, c := range []struct {
		name string
		b    []byte
		want Announcement
	}{
		{"v1", append(append([]byte{1}, head...), 0, 1, 0, 4),
			Announcement{Node: 3, Addr: "h:9092", Time: at, Claims: map[int]uint64{0: 4}}},
		{"v2", append(append([]byte{2}, head...), 1, 0, 1, 5, 9),
			Announcement{Node: 3, Addr: "h:9092", Time: at, Leaving: true, Claims: map[int]uint64{}, Released: map[int]uint64{5: 9}}},
		{"v3", append(append([]byte{3}, head...), 0, 0, 0, 1),
			Announcement{Node: 3, Addr: "h:9092", Time: at, Claims: map[int]uint64{}, Draining: true}},
		{"v4", append(append([]byte{4}, head...), 0, 1, 15, 7, 0, 0, 3, 3, '1', '.', '2'),
			Announcement{Node: 3, Addr: "h:9092", Time: at, Claims: map[int]uint64{15: 7}, Member: 2, HasMember: true, Version: "1.2"}},
	} {
		got, err := DecodeAnnouncement(c.b)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
		if c.name == "v4" {
			if b := EncodeAnnouncement(c.want); string(b) != string(c.b) {
				t.Errorf("v4 encodes as %v, want %v", b, c.b)
			}
		}
		for i := range c.b {
			if _, err := DecodeAnnouncement(c.b[:i]); err == nil {
				t.Errorf("%s cut at %d decoded", c.name, i)
			}
		}
		if _, err := DecodeAnnouncement(append(c.b[:len(c.b):len(c.b)], 0)); err == nil {
			t.Errorf("%s with a trailing byte decoded", c.name)
		}
	}
	for _, a := range []Announcement{
		{Node: -7, Addr: "", Time: at, Leaving: true, Claims: map[int]uint64{}, Released: map[int]uint64{1: 2, 14: 1 << 40}, Draining: true},
		{Node: 1, Addr: "x:1", Time: at, Claims: map[int]uint64{0: 1, 3: 8}, Member: 0, HasMember: true},
	} {
		got, err := DecodeAnnouncement(EncodeAnnouncement(a))
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("round trip %+v: %+v %v", a, got, err)
		}
	}
	if _, err := DecodeAnnouncement([]byte{5}); err == nil {
		t.Error("version 5 decoded")
	}
}

func FuzzAnnouncement(f *testing.F) {
	f.Add(EncodeAnnouncement(Announcement{Node: 3, Addr: "h:9092", Time: time.Unix(1, 2), Claims: map[int]uint64{0: 4, 15: 9}, HasMember: true, Member: 4, Version: "v1"}))
	f.Add(EncodeAnnouncement(Announcement{Node: -1, Leaving: true, Time: time.Unix(0, 1), Draining: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAnnouncement(b)
		if err != nil {
			return
		}
		back, err := DecodeAnnouncement(EncodeAnnouncement(a))
		if err != nil || !reflect.DeepEqual(a, back) {
			t.Fatalf("round trip: %+v %+v %v", a, back, err)
		}
	})
}
