package partlog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// syncRecorder replaces a log's fsync and remembers the files synced, in
// order.
type syncRecorder struct {
	mu    sync.Mutex
	files []string
}

func (r *syncRecorder) install(l *Log) {
	l.fsync = func(f *os.File) error {
		r.mu.Lock()
		r.files = append(r.files, filepath.Base(f.Name()))
		r.mu.Unlock()
		return f.Sync()
	}
}

func (r *syncRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.files
	r.files = nil
	return out
}

func syncState(l *Log) (unsynced int, durable, written uint64, dirClean bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.unsynced), l.durable.Load(), l.written, l.dirGen == l.dirSynced
}

func TestRollLeavesSyncToTheNextSync(t *testing.T) {
	l, err := Open(t.TempDir(), Options{SegmentBytes: 1024, Fsync: FsyncInterval, FsyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var rec syncRecorder
	rec.install(l)
	fill(t, l, 40)
	segs := l.SegmentCount()
	if segs < 4 {
		t.Fatalf("only %d segments; the test wants several rolls", segs)
	}
	unsynced, durable, written, dirClean := syncState(l)
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("rolling synced %v on the append path", got)
	}
	if unsynced != segs-1 || durable >= written || dirClean {
		t.Fatalf("before sync: %d unsynced of %d segments, durable %d of %d, dir clean %v", unsynced, segs, durable, written, dirClean)
	}

	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	var want []string
	l.mu.RLock()
	for _, s := range l.segs[:len(l.segs)-1] {
		want = append(want, filepath.Base(s.log.Name()), filepath.Base(s.index.Name()))
	}
	want = append(want, filepath.Base(l.active().log.Name()))
	l.mu.RUnlock()
	// Oldest first and the active segment last: nothing counts as durable
	// before every segment before it is.
	if !slices.Equal(got, want) {
		t.Fatalf("Sync synced %v, want %v", got, want)
	}
	unsynced, durable, written, dirClean = syncState(l)
	if unsynced != 0 || durable != written || !dirClean {
		t.Fatalf("after sync: %d unsynced, durable %d of %d, dir clean %v", unsynced, durable, written, dirClean)
	}
}

func TestAlwaysSyncsSealedSegmentsBeforeAcknowledging(t *testing.T) {
	l, err := Open(t.TempDir(), Options{SegmentBytes: 1024, Fsync: FsyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var rec syncRecorder
	rec.install(l)
	synced := map[string]bool{}
	for next := uint64(0); next < 40; next += 3 {
		if _, err := l.Append(makeBatch(t, next, 3), t0); err != nil {
			t.Fatal(err)
		}
		for _, f := range rec.take() {
			synced[f] = true
		}
		unsynced, durable, written, dirClean := syncState(l)
		if unsynced != 0 || durable < written || !dirClean {
			t.Fatalf("append of %d acknowledged with %d sealed segments unsynced, durable %d of %d, dir clean %v", next, unsynced, durable, written, dirClean)
		}
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.segs) < 4 {
		t.Fatalf("only %d segments; the test wants several rolls", len(l.segs))
	}
	for _, s := range l.segs {
		if name := filepath.Base(s.log.Name()); !synced[name] {
			t.Errorf("%s never synced", name)
		}
	}
}

func TestConcurrentAlwaysAcrossRolls(t *testing.T) {
	l, err := Open(t.TempDir(), Options{SegmentBytes: 2048, Fsync: FsyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 5)
	for range 4 {
		batches := make([][]byte, 25)
		for i := range batches {
			batches[i] = makeBatch(t, 0, 2)
		}
		wg.Go(func() {
			for _, b := range batches {
				if _, err := l.Append(b, t0); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	// Deleting and syncing alongside must not break the accounting.
	wg.Go(func() {
		for range 10 {
			if err := l.DeleteOldestSegments(1); err != nil {
				errc <- err
				return
			}
			if err := l.Sync(); err != nil {
				errc <- err
				return
			}
		}
	})
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	unsynced, durable, written, dirClean := syncState(l)
	if unsynced != 0 || durable != written || !dirClean {
		t.Fatalf("after sync: %d unsynced, durable %d of %d, dir clean %v", unsynced, durable, written, dirClean)
	}
}

func TestDeleteClosesOffThePath(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentBytes: 1024, Fsync: FsyncInterval, FsyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, l, 40)
	l.mu.RLock()
	gone := slices.Clone(l.segs[:2])
	l.mu.RUnlock()
	if err := l.DeleteOldestSegments(2); err != nil {
		t.Fatal(err)
	}
	for _, s := range gone {
		if _, err := os.Stat(s.log.Name()); !os.IsNotExist(err) {
			t.Fatalf("%s still there after delete: %v", s.log.Name(), err)
		}
	}
	l.mu.RLock()
	for _, s := range l.unsynced {
		if slices.Contains(gone, s) {
			t.Errorf("deleted segment %d still waits for a sync", s.base)
		}
	}
	l.mu.RUnlock()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited for the background work: every file is closed.
	for _, s := range gone {
		if err := s.log.Sync(); err == nil {
			t.Fatalf("%s still open after Close", s.log.Name())
		}
	}
}

func TestPreallocationIsTrimmed(t *testing.T) {
	dir := t.TempDir()
	const segBytes = 1 << 20
	opts := Options{SegmentBytes: segBytes, Fsync: FsyncNever}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of about 200 KiB leave a sealed segment's unused
	// preallocation well above the slack allowed below.
	big := func(first uint64) []byte { return makeBatch(t, first, 4500) }
	if _, err := l.Append(big(0), t0); err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	first, noPrealloc := l.active(), l.active().noPrealloc
	firstName, firstSize := first.log.Name(), first.size
	l.mu.RUnlock()
	if noPrealloc {
		t.Skip("the filesystem does not preallocate")
	}
	if a := allocated(t, firstName); a < segBytes {
		t.Fatalf("active segment of %d bytes has %d allocated, want the segment's worth", firstSize, a)
	}
	for l.SegmentCount() < 3 {
		if _, err := l.Append(big(l.NextOffset()), t0); err != nil {
			t.Fatal(err)
		}
	}
	if tail := segBytes - l.segs[0].size; tail < 128<<10 {
		t.Fatalf("sealed segment of %d bytes leaves %d preallocated; the test needs more", l.segs[0].size, tail)
	}
	// The sealed segment is trimmed in the background.
	checkfor.Eventually(t, 10*time.Second, "the sealed segment to be trimmed", func() error {
		a := allocated(t, firstName)
		return checkfor.True(a <= roundBlock(l.segs[0].size)+64<<10,
			"%d bytes allocated for %d of data", a, l.segs[0].size)
	})

	// A crash leaves the active segment's preallocation behind: close its
	// files as the kernel would, without trimming, and open again.
	next := l.NextOffset()
	want, _, err := l.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.closed = true
	active := l.active()
	activeName := active.log.Name()
	if err := active.flushIndex(); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.segs {
		s.log.Close()
		s.index.Close()
	}
	l.mu.Unlock()
	l.background.Wait()
	if a := allocated(t, activeName); a <= roundBlock(active.size)+64<<10 {
		t.Fatalf("crashed active segment holds only %d bytes for %d of data; the test needs its preallocation", a, active.size)
	}

	l, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.NextOffset() != next {
		t.Fatalf("next %d after reopening, want %d", l.NextOffset(), next)
	}
	got, _, err := l.Read(0, 1<<20, nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("reopened log reads differently (err %v)", err)
	}
	if a, size := allocated(t, activeName), l.active().size; a > roundBlock(size)+64<<10 {
		t.Fatalf("reopened active segment keeps %d bytes allocated for %d of data", a, size)
	}
	// Appends go on, and Close trims what they preallocated.
	if _, err := l.Append(big(next), t0); err != nil {
		t.Fatal(err)
	}
	size := l.active().size
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if a := allocated(t, activeName); a > roundBlock(size)+64<<10 {
		t.Fatalf("closed segment keeps %d bytes allocated for %d of data", a, size)
	}
	if st, err := os.Stat(activeName); err != nil || st.Size() != size {
		t.Fatalf("closed segment is %v bytes, holds %d", st.Size(), size)
	}
}

func roundBlock(n int64) int64 { return (n + 4095) &^ 4095 }

func TestSealedSegmentWithTornEndIsCut(t *testing.T) {
	dir, opts, base, b := sealedLog(t)
	// The index of the first (sealed) segment stays intact and its size
	// right, but the end of its last batch came back as zeros.
	p := segmentName(dir, base, logSuffix)
	clear(b[len(b)-8:])
	overwrite(t, p, b)
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, _, err := l.Read(0, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	offs := readOffsets(t, out, 0) // fails on a frame whose checksum is wrong
	if len(offs) == 0 || offs[len(offs)-1] != 39 || len(offs) >= 40 {
		t.Fatalf("offsets after a torn sealed segment: %v", offs)
	}
}

func TestIntervalAppendsWaitForASyncThatFallsBehind(t *testing.T) {
	const interval = 2 * time.Millisecond
	l, err := Open(t.TempDir(), Options{Fsync: FsyncInterval, FsyncInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan time.Time, 1)
	release := make(chan struct{})
	var once sync.Once
	// The first background sync stalls, as on a disk slower than ingest.
	l.fsync = func(f *os.File) error {
		once.Do(func() {
			entered <- time.Now()
			<-release
		})
		return f.Sync()
	}
	defer l.Close()
	fill(t, l, 10)
	began := <-entered
	// The log judges "behind" by the wall clock, so the condition is time
	// itself: the stalled sync must be older than two intervals.
	checkfor.Eventually(t, 5*time.Second, "the stalled sync to fall two intervals behind", func() error {
		age := time.Since(began)
		return checkfor.True(age > 2*interval, "stalled for %v", age)
	})
	target := l.syncTarget.Load()
	if target == 0 {
		t.Fatal("no sync target recorded")
	}
	durableAtReturn := make(chan uint64, 1)
	batch := makeBatch(t, 10, 1)
	go func() {
		_, err := l.Append(batch, time.Now())
		if err != nil {
			t.Error(err)
		}
		durableAtReturn <- l.durable.Load()
	}()
	select {
	case d := <-durableAtReturn:
		close(release)
		t.Fatalf("append returned while the sync begun %v ago was still running (durable %d of %d)", time.Since(began), d, target)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if d := <-durableAtReturn; d < target {
		t.Fatalf("append returned with %d durable, the stalled sync covered %d", d, target)
	}
}

// TestNoPreallocationOnTmpfs: on tmpfs, appends write without preallocating the blocks after
// them (fallocate there zeroes pages the write then overwrites).
func TestNoPreallocationOnTmpfs(t *testing.T) {
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil || !strings.Contains(string(mounts), " /dev/shm tmpfs ") {
		t.Skip("no tmpfs at /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "partlog-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := Open(dir, Options{Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.prealloc {
		t.Fatal("a log on tmpfs preallocates")
	}
	fill(t, l, 100)
	fi, err := l.active().log.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if allocatedPastEnd(fi) {
		t.Fatalf("the active segment holds blocks past its %d bytes", fi.Size())
	}
}

// The background sync runs on Options.Clock: what was appended is not synced before the clock
// has moved FsyncInterval, then it is; and an append judges whether a sync fell behind by the
// same clock, so a sync that has stalled for many intervals of wall time but none of the clock's
// makes no append wait.
func TestIntervalSyncOnClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	const interval = 10 * time.Millisecond
	l, err := Open(t.TempDir(), Options{Fsync: FsyncInterval, FsyncInterval: interval, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	l.fsync = func(f *os.File) error {
		once.Do(func() {
			close(entered)
			<-release
		})
		return f.Sync()
	}
	defer l.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	fill(t, l, 10)
	checkfor.Eventually(t, 5*time.Second, "the flusher's timer", func() error {
		return checkfor.True(fake.Timers() == 1, "%d timers", fake.Timers())
	})
	fake.Advance(interval - time.Nanosecond)
	select {
	case <-entered:
		t.Fatal("the background sync ran before FsyncInterval passed on the clock")
	default:
	}
	fake.Advance(time.Nanosecond)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no background sync once FsyncInterval passed on the clock")
	}
	// The sync stalls; wall time passes, the clock does not: an append does not wait for it.
	began := time.Now()
	checkfor.Eventually(t, 5*time.Second, "the stalled sync many intervals old in wall time", func() error {
		return checkfor.True(time.Since(began) > 5*interval, "stalled for %v", time.Since(began))
	})
	appended := make(chan error, 1)
	go func() {
		_, err := l.Append(makeBatch(t, 10, 1), time.Now())
		appended <- err
	}()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an append waited for a sync that is behind in wall time only")
	}
	close(release)
	l.mu.RLock()
	written := l.written
	l.mu.RUnlock()
	fake.Advance(interval)
	checkfor.Eventually(t, 5*time.Second, "the next background sync to cover what was written", func() error {
		d := l.durable.Load()
		return checkfor.True(d >= written, "durable %d of %d written", d, written)
	})
}
