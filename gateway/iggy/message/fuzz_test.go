package message

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func addSeeds(f *testing.F) {
	f.Add(goldenBatch(f))
	f.Add(build(f, 3, 5))
	f.Add([]byte{})
	f.Add(make([]byte, BatchHeaderSize))
}

// FuzzValidate checks that Validate never panics and that whatever it accepts
// the rest of the package agrees with.
func FuzzValidate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Validate(b)
		if err != nil {
			if Code(err) == 0 {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		var walked uint32
		it := Frames(b)
		for fr, ok := it.Next(); ok; fr, ok = it.Next() {
			if !fr.Valid() || fr.OffsetDelta != walked {
				t.Fatalf("accepted batch has bad frame %d", walked)
			}
			walked++
		}
		if it.Err() != nil || walked != n {
			t.Fatalf("accepted %d frames, walked %d, err %v", n, walked, it.Err())
		}
		c := bytes.Clone(b)
		Stamp(c, 9, 1<<40, 12345)
		if m, err := Validate(c); err != nil || m != n {
			t.Fatalf("stamped batch rejected: %v", err)
		}
		out, m := AppendSlice(nil, c, 0, n)
		if m != n || !bytes.Equal(out, c) {
			t.Fatalf("whole slice differs: %d of %d", m, n)
		}
	})
}

// FuzzFrames walks arbitrary bytes as one record and as a body of records.
func FuzzFrames(f *testing.F) {
	addSeeds(f)
	f.Add(append(build(f, 2, 3), build(f, 1, 4)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		it := Frames(b)
		total := 0
		for fr, ok := it.Next(); ok; fr, ok = it.Next() {
			total += fr.Size()
			if fr.Size() != FrameHeaderSize+len(fr.Payload)+len(fr.UserHeaders) {
				t.Fatalf("frame size %d, parts %d+%d", fr.Size(), len(fr.Payload), len(fr.UserHeaders))
			}
			fr.Valid()
		}
		if total > len(b) {
			t.Fatalf("frames cover %d of %d bytes", total, len(b))
		}
		r := Records(b)
		covered := 0
		for rec, ok := r.Next(); ok; rec, ok = r.Next() {
			covered += len(rec)
			_ = Each(rec, func(Frame) bool { return true })
		}
		if covered > len(b) || (r.Err() == nil && covered != len(b)) {
			t.Fatalf("records cover %d of %d bytes, err %v", covered, len(b), r.Err())
		}
	})
}

// FuzzAppendSlice slices both well-formed batches derived from the input and
// the raw input itself.
func FuzzAppendSlice(f *testing.F) {
	f.Add(uint8(5), uint16(3), uint64(2), uint32(2), []byte("x"))
	f.Add(uint8(1), uint16(0), uint64(0), uint32(1), goldenBatch(f))
	f.Add(uint8(40), uint16(100), uint64(1<<63), uint32(7), []byte{})
	f.Fuzz(func(t *testing.T, count uint8, size uint16, from uint64, maxCount uint32, raw []byte) {
		// Arbitrary bytes: must not panic, and what comes out must be one
		// record that walks cleanly.
		out, n := AppendSlice(nil, raw, from, maxCount)
		if n > 0 {
			if err := Each(out, func(Frame) bool { return true }); err != nil {
				t.Fatalf("slice of raw input does not walk: %v", err)
			}
		} else if len(out) != 0 {
			t.Fatal("bytes appended for zero frames")
		}

		if count == 0 {
			return
		}
		var b Builder
		for i := range int(count) {
			p, h := b.Reserve(MakeID(uint64(i), 0), uint64(i*3), int(size)%512, i%3)
			for j := range p {
				p[j] = byte(i + j)
			}
			copy(h, raw)
		}
		batch, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		base := from / 2
		Stamp(batch, 0, base, 1)
		out, n = AppendSlice(out[:0], batch, from, maxCount)
		var want uint32
		if from < base+uint64(count) {
			skip := uint32(0)
			if from > base {
				skip = uint32(from - base)
			}
			want = min(uint32(count)-skip, maxCount)
		}
		if n != want {
			t.Fatalf("base %d count %d from %d max %d: got %d frames, want %d", base, count, from, maxCount, n, want)
		}
		if n == 0 {
			return
		}
		h, _ := ParseBatchHeader(out)
		if h.BaseOffset != base || h.Count != n || h.BatchLength != uint64(len(out)) {
			t.Fatalf("slice header %+v", h)
		}
		first := true
		err = Each(out, func(fr Frame) bool {
			if !fr.Valid() {
				t.Fatal("invalid frame in slice")
			}
			if first && base+uint64(fr.OffsetDelta) != max(from, base) {
				t.Fatalf("first offset %d, want %d", base+uint64(fr.OffsetDelta), max(from, base))
			}
			first = false
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint64(out[offBatchChecksum:]) != checksumFrames(out, out[BatchHeaderSize:]) {
			t.Fatal("slice checksum wrong")
		}
	})
}
