package message

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func goldenBatch(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden_batch.hex")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenDecodes(t *testing.T) {
	b := goldenBatch(t)
	n, err := Validate(b)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	h, err := ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{OriginTimestamp: 1000, BatchLength: 396, Checksum: 0x7C260763C8381FA9, Count: 2}
	if h != want {
		t.Fatalf("header %+v, want %+v", h, want)
	}
	type frame struct {
		sum          uint64
		id           byte
		od, td       uint32
		payload, hdr string
	}
	wantFrames := []frame{
		{0x7596755A20B9D2BF, 7, 0, 0, "first-payload", ""},
		{0xC0B78E751C7E6BD6, 8, 1, 50, "second-payload", "user-header-bytes"},
	}
	var got []frame
	err = Each(b, func(f Frame) bool {
		if !f.Valid() {
			t.Errorf("frame %d not valid", len(got))
		}
		got = append(got, frame{f.Checksum, f.ID[0], f.OffsetDelta, f.TimestampDelta, string(f.Payload), string(f.UserHeaders)})
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantFrames) {
		t.Fatalf("frames %+v, want %+v", got, wantFrames)
	}
}

func TestGoldenRebuilds(t *testing.T) {
	var bld Builder
	bld.Add([16]byte{7}, 1000, []byte("first-payload"), nil)
	bld.Add([16]byte{8}, 1050, []byte("second-payload"), []byte("user-header-bytes"))
	got, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if want := goldenBatch(t); !bytes.Equal(got, want) {
		t.Fatalf("rebuilt batch differs\n got %x\nwant %x", got, want)
	}
	// The same through Reserve, after a Reset that reuses a dirty buffer.
	bld.Reset()
	p, h := bld.Reserve([16]byte{7}, 1000, 13, 0)
	copy(p, "first-payload")
	if len(h) != 0 {
		t.Fatalf("headers len %d", len(h))
	}
	p, h = bld.Reserve(MakeID(8, 0), 1050, 14, 17)
	copy(p, "second-payload")
	copy(h, "user-header-bytes")
	got, err = bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if want := goldenBatch(t); !bytes.Equal(got, want) {
		t.Fatalf("reserve-built batch differs\n got %x\nwant %x", got, want)
	}
}

// build makes a finished batch of n messages; message i has payload
// "m<i>" repeated to size and user headers when i is odd.
func build(t testing.TB, n int, size int) []byte {
	t.Helper()
	var b Builder
	for i := range n {
		payload := bytes.Repeat([]byte(fmt.Sprintf("m%d.", i)), size/3+1)[:size]
		var hdr []byte
		if i%2 == 1 {
			hdr = []byte(fmt.Sprintf("h%d", i))
		}
		b.Add(MakeID(uint64(i)+1, 0), 5000+uint64(n-i), payload, hdr)
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(out)
}

func TestBuilderRoundTrip(t *testing.T) {
	for _, n := range []int{1, 2, 7, 200} {
		b := build(t, n, 10)
		c, err := Validate(b)
		if err != nil || int(c) != n {
			t.Fatalf("n=%d: Validate = %d, %v", n, c, err)
		}
		h, _ := ParseBatchHeader(b)
		if h.OriginTimestamp != 5001 {
			t.Fatalf("origin %d, want 5001 (the minimum)", h.OriginTimestamp)
		}
		i := 0
		it := Frames(b)
		for f, ok := it.Next(); ok; f, ok = it.Next() {
			if f.OffsetDelta != uint32(i) || h.OriginTimestamp+uint64(f.TimestampDelta) != 5000+uint64(n-i) {
				t.Fatalf("frame %d: deltas %d/%d", i, f.OffsetDelta, f.TimestampDelta)
			}
			if f.ID != MakeID(uint64(i)+1, 0) || len(f.Payload) != 10 || (i%2 == 1) != (len(f.UserHeaders) > 0) {
				t.Fatalf("frame %d: %+v", i, f)
			}
			i++
		}
		if it.Err() != nil || i != n {
			t.Fatalf("walked %d frames, err %v", i, it.Err())
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	var b Builder
	if _, err := b.Finish(); !errors.Is(err, ErrInvalidMessagesCount) {
		t.Fatalf("empty: %v", err)
	}
	b.Add([16]byte{}, 0, []byte("x"), nil)
	b.Add([16]byte{}, math.MaxUint32+1, []byte("y"), nil)
	if _, err := b.Finish(); !errors.Is(err, ErrInvalidTimestampDelta) || Code(err) != CodeInvalidTimestampDelta {
		t.Fatalf("wide span: %v", err)
	}
	b.Reset()
	b.Add([16]byte{}, 0, []byte("x"), nil)
	b.Add([16]byte{}, math.MaxUint32, []byte("y"), nil)
	if _, err := b.Finish(); err != nil {
		t.Fatalf("widest allowed span: %v", err)
	}
	b.Reset()
	if p, h := b.Reserve([16]byte{}, 0, -1, 0); p != nil || h != nil {
		t.Fatal("negative length reserved bytes")
	}
	if _, err := b.Finish(); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("negative length: %v", err)
	}
	b.Reset()
	b.Add([16]byte{1}, 1, []byte("ok"), nil)
	if _, err := b.Finish(); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
}

func TestBuilderFinishTwiceAndContinue(t *testing.T) {
	var b Builder
	b.Add([16]byte{1}, 10, []byte("a"), nil)
	first, _ := b.Finish()
	first = bytes.Clone(first)
	again, _ := b.Finish()
	if !bytes.Equal(first, again) {
		t.Fatal("second Finish changed the record")
	}
	b.Add([16]byte{2}, 5, []byte("b"), nil)
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Validate(out); n != 2 || err != nil {
		t.Fatalf("Validate = %d, %v", n, err)
	}
}

func TestStamp(t *testing.T) {
	b := build(t, 5, 20)
	payloads := bytes.Clone(b[BatchHeaderSize:])
	Stamp(b, 3, 1000, 123456)
	if _, err := Validate(b); err != nil {
		t.Fatalf("stamped batch invalid: %v", err)
	}
	h, _ := ParseBatchHeader(b)
	if h.PartitionID != 3 || h.BaseOffset != 1000 || h.BaseTimestamp != 123456 || h.LastOffset() != 1004 {
		t.Fatalf("header %+v", h)
	}
	if !bytes.Equal(payloads, b[BatchHeaderSize:]) {
		t.Fatal("Stamp touched the frames")
	}
	// Short or nonsense input is left alone without panicking.
	Stamp(nil, 1, 2, 3)
	short := make([]byte, 100)
	Stamp(short, 1, 2, 3)
	if !bytes.Equal(short, make([]byte, 100)) {
		t.Fatal("Stamp wrote to a short slice")
	}
}

func mutate(b []byte, f func([]byte)) []byte {
	c := bytes.Clone(b)
	f(c)
	return c
}

func TestValidateRejects(t *testing.T) {
	good := build(t, 3, 16)
	le := binary.LittleEndian
	frame1 := BatchHeaderSize + FrameHeaderSize + 16 // first frame has no user headers
	resum := func(b []byte) { Stamp(b, 0, 0, 0) }
	cases := []struct {
		name string
		b    []byte
		want error
		code uint32
	}{
		{"empty", nil, ErrInvalidFormat, 4},
		{"short header", good[:255], ErrInvalidFormat, 4},
		{"truncated", good[:len(good)-1], ErrInvalidFormat, 4},
		{"trailing byte", append(bytes.Clone(good), 0), ErrInvalidFormat, 4},
		{"header reserved", mutate(good, func(b []byte) { b[255] = 1 }), ErrInvalidReservedField, 4101},
		{"count zero", mutate(good, func(b []byte) { le.PutUint32(b[offMessageCount:], 0) }), ErrInvalidMessagesCount, 4009},
		{"count high", mutate(good, func(b []byte) { le.PutUint32(b[offMessageCount:], 4); resum(b) }), ErrInvalidMessagesCount, 4009},
		{"count low", mutate(good, func(b []byte) { le.PutUint32(b[offMessageCount:], 2); resum(b) }), ErrInvalidMessagesCount, 4009},
		{"batch checksum", mutate(good, func(b []byte) { b[offBatchChecksum] ^= 1 }), ErrInvalidBatchChecksum, 4039},
		{"header field", mutate(good, func(b []byte) { b[offOriginTimestamp] ^= 1 }), ErrInvalidBatchChecksum, 4039},
		{"payload byte", mutate(good, func(b []byte) { b[BatchHeaderSize+FrameHeaderSize] ^= 1 }), ErrInvalidMessageChecksum, 4027},
		{"frame checksum", mutate(good, func(b []byte) { b[frame1] ^= 1 }), ErrInvalidMessageChecksum, 4027},
		{"frame reserved", mutate(good, func(b []byte) { b[frame1+offFrameReserved+7] = 1 }), ErrInvalidReservedField, 4101},
		{"offset delta", mutate(good, func(b []byte) { le.PutUint32(b[frame1+offOffsetDelta:], 2) }), ErrInvalidFormat, 4},
		{"payload len past end", mutate(good, func(b []byte) { le.PutUint32(b[frame1+offPayloadLen:], 1<<30) }), ErrInvalidFormat, 4},
		{"frames do not tile", mutate(append(bytes.Clone(good), make([]byte, 10)...), func(b []byte) { le.PutUint64(b[offBatchLength:], uint64(len(b))) }), ErrInvalidFormat, 4},
		{"header only", mutate(good[:BatchHeaderSize], func(b []byte) { le.PutUint64(b[offBatchLength:], BatchHeaderSize) }), ErrInvalidMessagesCount, 4009},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Validate(c.b)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if n != 0 {
				t.Fatalf("count %d on error", n)
			}
			if Code(err) != c.code {
				t.Fatalf("code %d, want %d", Code(err), c.code)
			}
		})
	}
	if n, err := Validate(good); err != nil || n != 3 {
		t.Fatalf("good batch: %d, %v", n, err)
	}
	// ValidateBuilt checks the same, except the message checksums against their bytes: a
	// changed payload passes, a changed stored checksum still fails the batch checksum.
	for _, c := range cases {
		t.Run("built/"+c.name, func(t *testing.T) {
			want := c.want
			switch c.name {
			case "payload byte":
				want = nil
			case "frame checksum":
				want = ErrInvalidBatchChecksum
			}
			n, err := ValidateBuilt(c.b)
			if !errors.Is(err, want) || (want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, want)
			}
			if want == nil && n != 3 {
				t.Fatalf("count %d", n)
			}
		})
	}
	if Code(nil) != 0 || Code(errors.New("other")) != 0 {
		t.Fatal("Code of foreign errors must be 0")
	}
}

func TestFramesCorrupt(t *testing.T) {
	good := build(t, 3, 16)
	le := binary.LittleEndian
	it := Frames(good[:100])
	if _, ok := it.Next(); ok || !errors.Is(it.Err(), ErrInvalidFormat) {
		t.Fatalf("short: %v", it.Err())
	}
	it = Frames(good[:len(good)-1])
	if _, ok := it.Next(); ok || !errors.Is(it.Err(), ErrInvalidFormat) {
		t.Fatalf("truncated record: %v", it.Err())
	}
	bad := mutate(good, func(b []byte) { le.PutUint32(b[BatchHeaderSize+FrameHeaderSize+16+offPayloadLen:], 1<<20) })
	it = Frames(bad)
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	if n != 1 || !errors.Is(it.Err(), ErrInvalidFormat) {
		t.Fatalf("bad second frame: walked %d, err %v", n, it.Err())
	}
	bad = mutate(good, func(b []byte) { le.PutUint32(b[offMessageCount:], 9) })
	if err := Each(bad, func(Frame) bool { return true }); !errors.Is(err, ErrInvalidMessagesCount) {
		t.Fatalf("count mismatch: %v", err)
	}
	stops := 0
	if err := Each(good, func(Frame) bool { stops++; return false }); err != nil || stops != 1 {
		t.Fatalf("early stop: %d, %v", stops, err)
	}
	// Frames ignores what follows the record.
	it = Frames(append(bytes.Clone(good), 1, 2, 3))
	n = 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	if n != 3 || it.Err() != nil {
		t.Fatalf("trailing bytes: walked %d, err %v", n, it.Err())
	}
}

func TestRecords(t *testing.T) {
	a, b := build(t, 2, 5), build(t, 3, 7)
	body := append(bytes.Clone(a), b...)
	r := Records(body)
	var got [][]byte
	for rec, ok := r.Next(); ok; rec, ok = r.Next() {
		got = append(got, rec)
	}
	if r.Err() != nil || len(got) != 2 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) {
		t.Fatalf("records %d, err %v", len(got), r.Err())
	}
	r = Records(body[:len(body)-3])
	got = got[:0]
	for rec, ok := r.Next(); ok; rec, ok = r.Next() {
		got = append(got, rec)
	}
	if len(got) != 1 || !errors.Is(r.Err(), ErrInvalidFormat) {
		t.Fatalf("truncated body: %d records, err %v", len(got), r.Err())
	}
	r = Records(append(bytes.Clone(a), 1))
	r.Next()
	if _, ok := r.Next(); ok || !errors.Is(r.Err(), ErrInvalidFormat) {
		t.Fatalf("one stray byte: %v", r.Err())
	}
}

func TestAppendSlice(t *testing.T) {
	b := build(t, 10, 8)
	Stamp(b, 1, 100, 777)
	type want struct {
		from uint64
		max  uint32
		n    uint32
		off0 uint64
	}
	for _, w := range []want{
		{0, 100, 10, 100},
		{100, 10, 10, 100},
		{100, 3, 3, 100},
		{103, 100, 7, 103},
		{105, 2, 2, 105},
		{109, 5, 1, 109},
		{110, 5, 0, 0},
		{0, 0, 0, 0},
	} {
		prefix := []byte("prefix")
		out, n := AppendSlice(prefix, b, w.from, w.max)
		if n != w.n {
			t.Fatalf("from %d max %d: n %d, want %d", w.from, w.max, n, w.n)
		}
		if !bytes.Equal(out[:6], []byte("prefix")) {
			t.Fatal("prefix clobbered")
		}
		rec := out[6:]
		if n == 0 {
			if len(rec) != 0 {
				t.Fatalf("from %d: appended %d bytes for no frame", w.from, len(rec))
			}
			continue
		}
		if c, err := Validate(rec); err == nil {
			if c != n || w.off0 != 100 {
				t.Fatalf("from %d: Validate count %d", w.from, c)
			}
		} else if w.off0 == 100 {
			t.Fatalf("from %d: slice starting at base invalid: %v", w.from, err)
		}
		h, _ := ParseBatchHeader(rec)
		if h.BaseOffset != 100 || h.BaseTimestamp != 777 || h.PartitionID != 1 || h.Count != n || h.BatchLength != uint64(len(rec)) {
			t.Fatalf("from %d: header %+v", w.from, h)
		}
		// The batch checksum must cover the slice: recompute it independently.
		if sum := checksumFrames(rec, rec[BatchHeaderSize:]); sum != h.Checksum {
			t.Fatalf("from %d: checksum %#x, want %#x", w.from, h.Checksum, sum)
		}
		i := uint32(0)
		err := Each(rec, func(f Frame) bool {
			if !f.Valid() || h.BaseOffset+uint64(f.OffsetDelta) != w.off0+uint64(i) {
				t.Errorf("from %d: frame %d offset %d", w.from, i, h.BaseOffset+uint64(f.OffsetDelta))
			}
			i++
			return true
		})
		if err != nil || i != n {
			t.Fatalf("from %d: walked %d, err %v", w.from, i, err)
		}
	}
	if out, n := AppendSlice(nil, b[:50], 0, 10); n != 0 || len(out) != 0 {
		t.Fatal("short input appended something")
	}
	// A whole batch is appended byte for byte.
	if out, n := AppendSlice(nil, b, 0, 10); n != 10 || !bytes.Equal(out, b) {
		t.Fatal("whole batch not appended unchanged")
	}
}
