package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// payloadFor is the payload of the message that should live at offset.
func payloadFor(offset uint64) []byte {
	return []byte(fmt.Sprintf("message-%d-%s", offset, bytes.Repeat([]byte{'x'}, int(offset%7))))
}

// makeBatch builds a batch of count messages whose payloads describe the
// offsets first..first+count-1 they are expected to get.
func makeBatch(t testing.TB, first uint64, count int) []byte {
	t.Helper()
	var b message.Builder
	for i := range count {
		off := first + uint64(i)
		b.Add(message.MakeID(off+1, 0), 1000+off, payloadFor(off), []byte{byte(i)})
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(out)
}

var t0 = time.UnixMicro(1_700_000_000_000_000)

// fill appends batches of 1..4 messages until total messages are stored and
// returns the base offsets.
func fill(t testing.TB, l *Log, total int) []uint64 {
	t.Helper()
	var bases []uint64
	next := l.NextOffset()
	for i := 0; next < uint64(total); i++ {
		n := min(1+i%4, total-int(next))
		base, err := l.Append(makeBatch(t, next, n), t0.Add(time.Duration(next)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if base != next {
			t.Fatalf("append got base %d, want %d", base, next)
		}
		bases = append(bases, base)
		next += uint64(n)
	}
	return bases
}

// readOffsets decodes a Read result into the offsets and payloads it holds,
// checking each record and frame along the way.
func readOffsets(t testing.TB, b []byte, partition uint32) []uint64 {
	t.Helper()
	var offs []uint64
	r := message.Records(b)
	for rec, ok := r.Next(); ok; rec, ok = r.Next() {
		h, err := message.ParseBatchHeader(rec)
		if err != nil {
			t.Fatal(err)
		}
		if h.PartitionID != uint64(partition) {
			t.Fatalf("partition id %d, want %d", h.PartitionID, partition)
		}
		err = message.Each(rec, func(f message.Frame) bool {
			off := h.BaseOffset + uint64(f.OffsetDelta)
			if !f.Valid() || !bytes.Equal(f.Payload, payloadFor(off)) || f.ID != message.MakeID(off+1, 0) {
				t.Errorf("offset %d: bad frame (valid %v, payload %q)", off, f.Valid(), f.Payload)
			}
			offs = append(offs, off)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		sum := binary.LittleEndian.Uint64(rec[40:])
		c := bytes.Clone(rec)
		message.Stamp(c, h.PartitionID, h.BaseOffset, h.BaseTimestamp)
		if binary.LittleEndian.Uint64(c[40:]) != sum {
			t.Fatalf("record at %d: batch checksum not recomputed for the slice", h.BaseOffset)
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return offs
}

func checkRange(t testing.TB, l *Log, from uint64, maxCount uint32, first, next uint64) {
	t.Helper()
	out, n, err := l.Read(from, maxCount, []byte("keep"))
	if err != nil {
		t.Fatalf("Read(%d, %d): %v", from, maxCount, err)
	}
	if string(out[:4]) != "keep" {
		t.Fatal("Read clobbered dst")
	}
	offs := readOffsets(t, out[4:], l.opts.PartitionID)
	start := max(from, first)
	var want []uint64
	for o := start; o < next && len(want) < int(maxCount); o++ {
		want = append(want, o)
	}
	if n != uint32(len(want)) || fmt.Sprint(offs) != fmt.Sprint(want) {
		t.Fatalf("Read(%d, %d) = n %d offsets %v, want %v", from, maxCount, n, offs, want)
	}
}

func TestAppendReadAcrossRolls(t *testing.T) {
	l, err := Open(t.TempDir(), Options{PartitionID: 7, SegmentBytes: 2048, Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, 120)
	if l.SegmentCount() < 5 {
		t.Fatalf("only %d segments; the test wants several rolls", l.SegmentCount())
	}
	if l.FirstOffset() != 0 || l.NextOffset() != 120 || l.MessageCount() != 120 {
		t.Fatalf("first %d next %d count %d", l.FirstOffset(), l.NextOffset(), l.MessageCount())
	}
	for from := uint64(0); from <= 122; from++ {
		for _, m := range []uint32{1, 2, 3, 5, 17, 1000} {
			checkRange(t, l, from, m, 0, 120)
		}
	}
	if out, n, err := l.Read(0, 0, nil); err != nil || n != 0 || len(out) != 0 {
		t.Fatal("maxCount 0 read something")
	}
	var size uint64
	for _, s := range l.segs {
		st, _ := s.log.Stat()
		size += uint64(st.Size())
		if st.Size() > 2048 {
			t.Fatalf("segment of %d bytes past SegmentBytes", st.Size())
		}
	}
	if l.SizeBytes() != size {
		t.Fatalf("SizeBytes %d, files hold %d", l.SizeBytes(), size)
	}
}

func TestReadLimit(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, 40)
	out, n, err := l.ReadLimit(0, 1000, 1, nil)
	if err != nil || n != 1 {
		t.Fatalf("tiny limit: n %d, err %v (the first record is always returned)", n, err)
	}
	if got := readOffsets(t, out, 0); fmt.Sprint(got) != "[0]" {
		t.Fatalf("offsets %v", got)
	}
	out, n, _ = l.ReadLimit(1, 1000, 2000, nil)
	if len(out) > 2000 || n == 0 || n >= 39 {
		t.Fatalf("limit 2000: %d bytes, %d messages", len(out), n)
	}
	if got := readOffsets(t, out, 0); got[0] != 1 || got[len(got)-1] != uint64(n) {
		t.Fatalf("offsets %v", got)
	}
}

func TestReopenContinues(t *testing.T) {
	dir := t.TempDir()
	opts := Options{PartitionID: 3, SegmentBytes: 1500, Fsync: FsyncAlways}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 50)
	segs := l.SegmentCount()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(makeBatch(t, 50, 1), t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	l, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.NextOffset() != 50 || l.SegmentCount() != segs || l.MessageCount() != 50 {
		t.Fatalf("reopened: next %d segments %d/%d", l.NextOffset(), l.SegmentCount(), segs)
	}
	fill(t, l, 80)
	checkRange(t, l, 0, 1000, 0, 80)
	l.Close()
}

// segmentFiles returns the .log and .index paths of the newest segment.
func lastSegment(t *testing.T, dir string) (string, string) {
	t.Helper()
	bases, err := listSegments(dir)
	if err != nil || len(bases) == 0 {
		t.Fatal(bases, err)
	}
	b := bases[len(bases)-1]
	return segmentName(dir, b, logSuffix), segmentName(dir, b, indexSuffix)
}

func TestTornAndCorruptTail(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 4096, Fsync: FsyncNever}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	bases := fill(t, l, 30)
	lastBase := bases[len(bases)-1]
	l.Close()
	logPath, indexPath := lastSegment(t, dir)
	origLog, _ := os.ReadFile(logPath)
	origIndex, _ := os.ReadFile(indexPath)
	lastEntry, _ := decodeEntry(origIndex[len(origIndex)-entrySize:])
	if lastEntry.base != lastBase {
		t.Fatalf("last index entry at %d, want %d", lastEntry.base, lastBase)
	}
	restore := func(logBytes []byte) {
		overwrite(t, logPath, logBytes)
		overwrite(t, indexPath, origIndex)
	}
	verify := func(what string) {
		l, err := Open(dir, opts)
		if err != nil {
			t.Fatalf("%s: open: %v", what, err)
		}
		defer l.Close()
		if l.NextOffset() != lastBase {
			t.Fatalf("%s: next %d, want %d (the last batch cut)", what, l.NextOffset(), lastBase)
		}
		if st, _ := os.Stat(logPath); st.Size() != lastEntry.pos {
			t.Fatalf("%s: log is %d bytes, want %d", what, st.Size(), lastEntry.pos)
		}
		checkRange(t, l, 0, 1000, 0, lastBase)
		if base, err := l.Append(makeBatch(t, lastBase, 2), t0.Add(time.Hour)); err != nil || base != lastBase {
			t.Fatalf("%s: append after recovery: %d, %v", what, base, err)
		}
		checkRange(t, l, lastBase-1, 1000, 0, lastBase+2)
	}
	for cut := lastEntry.pos; cut < int64(len(origLog)); cut++ {
		restore(origLog[:cut])
		verify(fmt.Sprintf("cut at %d", cut))
	}
	for i := lastEntry.pos; i < int64(len(origLog)); i++ {
		b := bytes.Clone(origLog)
		b[i] ^= 0x40
		restore(b)
		verify(fmt.Sprintf("flip at %d", i))
	}
	// Garbage after an intact log is cut as well.
	restore(append(bytes.Clone(origLog), bytes.Repeat([]byte{0xAB}, 300)...))
	l, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.NextOffset() != 30 {
		t.Fatalf("next %d after trailing garbage", l.NextOffset())
	}
	checkRange(t, l, 0, 1000, 0, 30)
	l.Close()
}

func TestIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 1024, Fsync: FsyncInterval, FsyncInterval: time.Millisecond}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 60)
	l.Close()
	bases, _ := listSegments(dir)
	if len(bases) < 3 {
		t.Fatalf("%d segments", len(bases))
	}
	indexes := map[string][]byte{}
	for _, b := range bases {
		p := segmentName(dir, b, indexSuffix)
		indexes[p], _ = os.ReadFile(p)
		if len(indexes[p]) == 0 {
			t.Fatalf("index %s empty after Close", p)
		}
	}
	damage := []struct {
		name string
		do   func(p string)
	}{
		{"missing", func(p string) { os.Remove(p) }},
		{"empty", func(p string) { overwrite(t, p, nil) }},
		{"flipped", func(p string) {
			b := bytes.Clone(indexes[p])
			b[len(b)/2] ^= 1
			overwrite(t, p, b)
		}},
		{"short", func(p string) { overwrite(t, p, indexes[p][:len(indexes[p])-3]) }},
		{"extra entry", func(p string) {
			b := bytes.Clone(indexes[p])
			overwrite(t, p, append(b, b[len(b)-entrySize:]...))
		}},
	}
	for _, d := range damage {
		for p := range indexes {
			d.do(p)
		}
		l, err := Open(dir, opts)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		checkRange(t, l, 0, 1000, 0, 60)
		checkRange(t, l, 33, 5, 0, 60)
		l.Close()
		for p, want := range indexes {
			if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
				t.Fatalf("%s: index %s not rebuilt (%d bytes, want %d)", d.name, filepath.Base(p), len(got), len(want))
			}
		}
	}
}

// sealedLog writes 40 messages into 1 KiB segments and closes the log, for a test that damages
// a sealed segment: it returns the directory, the options to open it again, the base offset of
// the first segment and the bytes of its log file.
func sealedLog(t *testing.T) (dir string, opts Options, base uint64, first []byte) {
	t.Helper()
	dir = t.TempDir()
	opts = Options{SegmentBytes: 1024, Fsync: FsyncNever}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 40)
	l.Close()
	bases, err := listSegments(dir)
	if err != nil || len(bases) < 2 {
		t.Fatalf("segments %v (%v), want a sealed one and more", bases, err)
	}
	first, err = os.ReadFile(segmentName(dir, bases[0], logSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return dir, opts, bases[0], first
}

func TestCorruptSealedSegmentIsCut(t *testing.T) {
	dir, opts, base, b := sealedLog(t)
	// Tear the first (sealed) segment and drop its index so it is scanned.
	if err := os.WriteFile(segmentName(dir, base, logSuffix), b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(segmentName(dir, base, indexSuffix)); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.NextOffset() != 40 {
		t.Fatalf("next %d", l.NextOffset())
	}
	out, _, err := l.Read(0, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	offs := readOffsets(t, out, 0)
	if len(offs) == 0 || offs[len(offs)-1] != 39 || uint64(len(offs)) >= 40 || uint64(len(offs)) != l.MessageCount() {
		t.Fatalf("offsets after a cut in a sealed segment: %v (count %d)", offs, l.MessageCount())
	}
}

func TestTimestamps(t *testing.T) {
	l, err := Open(t.TempDir(), Options{SegmentBytes: 700, Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ok := l.OffsetForTimestamp(0); ok {
		t.Fatal("empty log found a timestamp")
	}
	times := []int64{100, 200, 200, 150 /* clock went back */, 400, 500}
	for i, ms := range times {
		if _, err := l.Append(makeBatch(t, uint64(2*i), 2), t0.Add(time.Duration(ms)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	us := func(ms int64) uint64 { return uint64(t0.Add(time.Duration(ms) * time.Millisecond).UnixMicro()) }
	cases := []struct {
		ms   int64
		want uint64
		ok   bool
	}{{0, 0, true}, {100, 0, true}, {101, 2, true}, {200, 2, true}, {201, 8, true}, {500, 10, true}, {501, 0, false}}
	for _, c := range cases {
		got, ok := l.OffsetForTimestamp(us(c.ms))
		if got != c.want || ok != c.ok {
			t.Fatalf("OffsetForTimestamp(%dms) = %d %v, want %d %v", c.ms, got, ok, c.want, c.ok)
		}
	}
	out, _, _ := l.Read(6, 2, nil)
	h, _ := message.ParseBatchHeader(out)
	if h.BaseTimestamp != us(200) {
		t.Fatalf("batch appended while the clock went back has ts %d, want %d", h.BaseTimestamp, us(200))
	}
}

func TestDeleteAndPurge(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentBytes: 1024, Fsync: FsyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, 60)
	segs := l.SegmentCount()
	firstOf2 := l.segs[2].base
	if err := l.DeleteOldestSegments(2); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() != segs-2 || l.FirstOffset() != firstOf2 || l.MessageCount() != 60-firstOf2 {
		t.Fatalf("after delete: %d segments, first %d, count %d", l.SegmentCount(), l.FirstOffset(), l.MessageCount())
	}
	checkRange(t, l, 0, 1000, firstOf2, 60)
	if err := l.DeleteOldestSegments(1000); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() != 1 || l.FirstOffset() != 60 || l.NextOffset() != 60 || l.MessageCount() != 0 || l.SizeBytes() != 0 {
		t.Fatalf("after deleting all: %d segments, first %d next %d", l.SegmentCount(), l.FirstOffset(), l.NextOffset())
	}
	if out, n, err := l.Read(0, 10, nil); err != nil || n != 0 || len(out) != 0 {
		t.Fatalf("read of empty log: %d %v", n, err)
	}
	if err := l.DeleteOldestSegments(1); err != nil { // empty active segment at next
		t.Fatal(err)
	}
	fill(t, l, 70)
	checkRange(t, l, 0, 1000, 60, 70)
	if err := l.Purge(); err != nil {
		t.Fatal(err)
	}
	if l.NextOffset() != 0 || l.MessageCount() != 0 || l.SegmentCount() != 1 {
		t.Fatalf("after purge: next %d", l.NextOffset())
	}
	fill(t, l, 5)
	checkRange(t, l, 0, 1000, 0, 5)
	l.Close()
	bases, _ := listSegments(dir)
	if len(bases) == 0 || bases[0] != 0 || bases[len(bases)-1] >= 5 {
		t.Fatalf("files left after purge: %v", bases)
	}
	l2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l2.NextOffset() != 5 {
		t.Fatalf("reopened after purge: next %d", l2.NextOffset())
	}
	if err := l2.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Remove left the directory: %v", err)
	}
}

func TestConcurrentAppendAndRead(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentBytes: 8192, Fsync: FsyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 4, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[uint64]string{}
	errc := make(chan error, writers+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				var b message.Builder
				b.Add([16]byte{byte(w)}, 1, []byte(fmt.Sprintf("w%d-%d", w, i)), nil)
				batch, _ := b.Finish()
				base, err := l.Append(batch, time.Now())
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				if _, dup := seen[base]; dup {
					errc <- fmt.Errorf("offset %d given twice", base)
				}
				seen[base] = fmt.Sprintf("w%d-%d", w, i)
				mu.Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		// A reader running alongside must always see a consistent prefix.
		for {
			select {
			case <-stop:
				errc <- nil
				return
			default:
			}
			out, n, err := l.Read(0, 1<<20, nil)
			if err != nil {
				errc <- err
				return
			}
			var frames uint32
			r := message.Records(out)
			for rec, ok := r.Next(); ok; rec, ok = r.Next() {
				if _, err := message.Validate(rec); err != nil {
					errc <- err
					return
				}
				h, _ := message.ParseBatchHeader(rec)
				frames += h.Count
			}
			if frames != n {
				errc <- fmt.Errorf("read says %d messages, records hold %d", n, frames)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = Open(dir, Options{SegmentBytes: 8192})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.NextOffset() != writers*perWriter {
		t.Fatalf("next %d", l.NextOffset())
	}
	out, _, _ := l.Read(0, 1<<20, nil)
	r := message.Records(out)
	for rec, ok := r.Next(); ok; rec, ok = r.Next() {
		h, _ := message.ParseBatchHeader(rec)
		message.Each(rec, func(f message.Frame) bool {
			if want := seen[h.BaseOffset+uint64(f.OffsetDelta)]; string(f.Payload) != want {
				t.Errorf("offset %d holds %q, want %q", h.BaseOffset, f.Payload, want)
			}
			return true
		})
	}
}

func TestAppendRejectsMalformed(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	good := makeBatch(t, 0, 2)
	for _, b := range [][]byte{nil, good[:100], good[:len(good)-1], append(bytes.Clone(good), 0)} {
		if _, err := l.Append(b, t0); !errors.Is(err, ErrBadBatch) {
			t.Fatalf("%d bytes: %v", len(b), err)
		}
	}
	if l.NextOffset() != 0 || l.SizeBytes() != 0 {
		t.Fatal("a rejected batch changed the log")
	}
}

func TestFsyncPolicy(t *testing.T) {
	for _, p := range []FsyncPolicy{FsyncAlways, FsyncInterval, FsyncNever} {
		got, err := ParseFsyncPolicy(p.String())
		if err != nil || got != p {
			t.Fatalf("%v: %v %v", p, got, err)
		}
		var q FsyncPolicy
		txt, _ := p.MarshalText()
		if err := q.UnmarshalText(txt); err != nil || q != p {
			t.Fatalf("text %s: %v", txt, err)
		}
	}
	if _, err := ParseFsyncPolicy("sometimes"); err == nil {
		t.Fatal("accepted a bad policy")
	}
	if p, _ := ParseFsyncPolicy(" ALWAYS "); p != FsyncAlways {
		t.Fatal("case or spaces not accepted")
	}
	if _, err := Open(t.TempDir(), Options{Fsync: 9}); err == nil {
		t.Fatal("Open accepted a bad policy")
	}
}

func TestIntervalFlusherSyncs(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Fsync: FsyncInterval, FsyncInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, l, 10)
	l.mu.RLock()
	written := l.written
	l.mu.RUnlock()
	checkfor.Eventually(t, 5*time.Second, "the background sync to cover what was written", func() error {
		d := l.durable.Load()
		return checkfor.True(d >= written, "durable %d of %d written", d, written)
	})
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
}

// overwrite replaces a file's contents without truncating it to zero first,
// which on ext4 forces a flush on close and makes these loops slow.
func overwrite(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// TestReadFewOfLargeBatch: a read of a few messages of a large batch reads a prefix of it, and
// falls back to the whole batch when the messages it wants are larger than the batch's average
// (the prefix then cuts them); either way the answer is the same.
func TestReadFewOfLargeBatch(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(makeBatch(t, 0, 2000), t0); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		from  uint64
		count uint32
	}{{0, 1}, {5, 3}, {100, 50}, {1990, 20}, {1999, 1}} {
		checkRange(t, l, r.from, r.count, 0, 2000)
	}

	// Ten large messages, then many small ones: the average says a prefix is enough for the
	// first five, and it is not.
	var b message.Builder
	for i := range 400 {
		off := uint64(2000 + i)
		p := payloadFor(off)
		if i < 10 {
			p = append(bytes.Repeat([]byte{'L'}, 20<<10), p...)
		}
		b.Add(message.MakeID(off+1, 0), 1000+off, p, []byte{byte(i)})
	}
	batch, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(bytes.Clone(batch), t0); err != nil {
		t.Fatal(err)
	}
	out, n, err := l.Read(2000, 5, nil)
	if err != nil || n != 5 {
		t.Fatalf("Read(2000, 5): n %d, err %v", n, err)
	}
	m := 0
	err = message.Each(out, func(f message.Frame) bool {
		if !f.Valid() || !bytes.HasPrefix(f.Payload, []byte("LLLL")) {
			t.Errorf("message %d: valid %v, payload starts %q", m, f.Valid(), f.Payload[:4])
		}
		m++
		return true
	})
	if err != nil || m != 5 {
		t.Fatalf("read %d messages, err %v", m, err)
	}
}
