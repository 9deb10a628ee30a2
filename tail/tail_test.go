package tail_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/tail"
)

func TestShow(t *testing.T) {
	for _, tc := range []struct {
		in       []byte
		text, as string
	}{
		{nil, "", tail.EncNull},
		{[]byte{}, "", tail.EncText},
		{[]byte(`{"a":[1,2]}`), `{"a":[1,2]}`, tail.EncJSON},
		{[]byte(`42`), `42`, tail.EncJSON},
		{[]byte("héllo\tworld\n"), "héllo\tworld\n", tail.EncText},
		{[]byte("bell\x07"), "62656c6c07", tail.EncHex},
		{[]byte{0xff, 0xfe}, "fffe", tail.EncHex},
	} {
		text, as := tail.Show(tc.in)
		if text != tc.text || as != tc.as {
			t.Errorf("Show(%q) = %q %s, want %q %s", tc.in, text, as, tc.text, tc.as)
		}
	}
}

// In text a value is cut to a screen's width on one line and says its size; the row keeps it
// whole for JSON.
func TestRecordCells(t *testing.T) {
	long := strings.Repeat("ab", 100)
	r := tail.NewRecord(&kgo.Record{Partition: 3, Offset: 7, Timestamp: time.Date(2026, 12, 1, 14, 2, 0, 5e6, time.UTC), Key: []byte("line1\nline2"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}, Value: []byte(long)})
	c := r.Cells()
	want := []string{"3", "7", "2026-12-01T14:02:00.005Z", `line1\nline2`, "h=v", long[:95] + "… (200 bytes)"}
	for i := range want {
		if c[i] != want[i] {
			t.Errorf("cell %d: %q, want %q", i, c[i], want[i])
		}
	}
	if r.Value != long {
		t.Fatalf("the record's value was cut: %d bytes", len(r.Value))
	}
	if c := tail.NewRecord(&kgo.Record{Value: []byte("short")}).Cells(); c[5] != "short" {
		t.Fatalf("a short value: %q", c[5])
	}
}

// HexValue is the value's bytes whichever way Show wrote them.
func TestHexValue(t *testing.T) {
	for _, v := range [][]byte{[]byte(`{"a":1}`), []byte("text\n"), {0xff, 0x00}, {}} {
		if got, want := tail.NewRecord(&kgo.Record{Value: v}).HexValue(), fmt.Sprintf("%x", v); got != want {
			t.Errorf("HexValue of %q = %q, want %q", v, got, want)
		}
	}
	if got := tail.NewRecord(&kgo.Record{}).HexValue(); got != "" {
		t.Errorf("HexValue of null = %q", got)
	}
}
