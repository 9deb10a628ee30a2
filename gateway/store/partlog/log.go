package partlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// Errors returned by a Log.
var (
	ErrClosed   = errors.New("partlog: log closed")
	ErrBadBatch = errors.New("partlog: malformed batch")
	// ErrCorrupt means stored bytes no longer match the index: the disk
	// changed under the log.
	ErrCorrupt = errors.New("partlog: stored batch does not match its index")
)

// Log is the durable log of one partition. All methods are safe for
// concurrent use; appends are serialized internally.
type Log struct {
	dir  string
	opts Options
	// prealloc says appends preallocate blocks (segment.reserve); not on tmpfs.
	prealloc bool

	mu     sync.RWMutex
	segs   []*segment // oldest first; the last one is active
	next   uint64
	lastTS uint64
	closed bool
	failed error // set when a failed write could not be undone

	// written counts bytes appended since Open across segments; durable is
	// the prefix of it known to be synced. Group commit compares the two.
	written uint64
	durable atomic.Uint64
	syncMu  sync.Mutex
	// unsynced holds the segments sealed since the last sync, oldest first:
	// rolling does not wait for the disk, the next sync covers them. dirGen
	// counts changes to the directory and dirSynced is the last count
	// synced.
	unsynced  []*segment
	dirGen    uint64
	dirSynced uint64
	// syncTarget is the position the sync under way (or the last one) makes
	// durable, and syncStart when it began, in Unix nanoseconds.
	syncTarget atomic.Uint64
	syncStart  atomic.Int64

	// fsync forces one segment file to disk; tests replace it to watch.
	fsync func(*os.File) error

	// background tracks file work taken off the append path: closing the
	// files of deleted segments and trimming sealed ones. Close waits for it.
	background sync.WaitGroup

	scratch sync.Pool

	stop chan struct{}
	done chan struct{}
}

// Open opens or creates the log in dir and recovers it (see the package
// documentation).
func Open(dir string, opts Options) (*Log, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bases, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, fsync: (*os.File).Sync, prealloc: preallocates(dir)}
	for i, base := range bases {
		s, err := openSegment(dir, base, i < len(bases)-1, &opts)
		if err != nil {
			l.closeSegments()
			return nil, err
		}
		if n := len(l.segs); n > 0 && l.segs[n-1].next() > base {
			s.close()
			l.closeSegments()
			return nil, fmt.Errorf("partlog: segment %d overlaps the one before it (which ends at %d)", base, l.segs[n-1].next())
		}
		l.segs = append(l.segs, s)
	}
	if len(l.segs) == 0 {
		s, err := createSegment(dir, 0)
		if err != nil {
			return nil, err
		}
		l.segs = append(l.segs, s)
		if err := syncDir(dir); err != nil {
			l.closeSegments()
			return nil, err
		}
	}
	last := l.active()
	l.next = last.next()
	for _, s := range l.segs {
		if n := len(s.entries); n > 0 {
			l.lastTS = max(l.lastTS, s.entries[n-1].ts)
		}
	}
	if opts.Fsync == FsyncInterval {
		l.stop = make(chan struct{})
		l.done = make(chan struct{})
		go l.flusher()
	}
	return l, nil
}

func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []uint64
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, logSuffix) || len(name) != nameDigits+len(logSuffix) {
			continue
		}
		base, err := strconv.ParseUint(name[:nameDigits], 10, 64)
		if err != nil {
			continue
		}
		bases = append(bases, base)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

func (l *Log) closeSegments() error {
	var errs []error
	for _, s := range l.segs {
		errs = append(errs, s.close())
	}
	l.segs = nil
	return errors.Join(errs...)
}

// Append stamps batch in place with the partition id, the next offset and the
// append time (now, or the previous batch's time if the clock went back, so
// timestamps never decrease), writes it, and returns its base offset. batch
// must be one record that passed message.Validate. Under FsyncAlways the
// batch is on stable storage when Append returns.
func (l *Log) Append(batch []byte, now time.Time) (uint64, error) {
	h, err := message.ParseBatchHeader(batch)
	if err != nil || h.BatchLength != uint64(len(batch)) || h.Count == 0 || h.BatchLength > maxBatchBytes {
		return 0, fmt.Errorf("%w: %d bytes, header %+v", ErrBadBatch, len(batch), h)
	}
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	s := l.active()
	if s.size > 0 && s.size+int64(len(batch)) > l.opts.SegmentBytes {
		if err := l.roll(); err != nil {
			l.mu.Unlock()
			return 0, err
		}
		s = l.active()
	}
	ts := max(uint64(now.UnixMicro()), l.lastTS)
	base := l.next
	message.Stamp(batch, uint64(l.opts.PartitionID), base, ts)
	if l.prealloc {
		s.reserve(int64(len(batch)), l.opts.SegmentBytes)
	}
	if _, err := s.log.WriteAt(batch, s.size); err != nil {
		if terr := s.log.Truncate(s.size); terr != nil {
			l.failed = fmt.Errorf("partlog: write failed (%v) and could not be undone: %w", err, terr)
		}
		s.alloc = min(s.alloc, s.size)
		l.mu.Unlock()
		return 0, fmt.Errorf("partlog: append: %w", err)
	}
	s.add(entry{base: base, pos: s.size, ts: ts, length: uint32(len(batch)), count: h.Count})
	l.next = base + uint64(h.Count)
	l.lastTS = ts
	l.written += uint64(len(batch))
	target := l.written
	if len(s.pending) >= indexFlushSize {
		if err := s.flushIndex(); err != nil {
			l.opts.Logger.Warn("partlog: index write failed", "segment", s.index.Name(), "err", err)
		}
	}
	l.mu.Unlock()

	switch l.opts.Fsync {
	case FsyncAlways:
		if err := l.syncUpTo(target); err != nil {
			return 0, fmt.Errorf("partlog: fsync: %w", err)
		}
	case FsyncInterval:
		if err := l.keepUp(); err != nil {
			return 0, fmt.Errorf("partlog: fsync: %w", err)
		}
	}
	return base, nil
}

// keepUp makes an appender wait for the background sync under way once that
// sync has run for longer than the interval. Appends never wait for the disk
// while it keeps up; when it does not, the waits hold ingest to the disk's
// pace, so what a power failure can lose stays within about two intervals
// instead of growing with the page cache.
func (l *Log) keepUp() error {
	t := l.syncTarget.Load()
	if l.durable.Load() >= t || l.opts.Clock.Now().UnixNano()-l.syncStart.Load() <= int64(l.opts.FsyncInterval) {
		return nil
	}
	if err := l.syncUpTo(t); err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.failed
}

// roll seals the active segment and starts a new one at l.next. Called with
// l.mu held. It does not sync: the sealed segment and the new directory
// entry join the work of the next sync (the group commit of FsyncAlways, the
// background tick of FsyncInterval), which syncs them before the new
// segment's bytes and counts nothing durable until all are. Syncing here,
// under the lock, stalled every appender for as long as the disk took to
// absorb a whole segment.
func (l *Log) roll() error {
	old := l.active()
	if err := old.flushIndex(); err != nil {
		return err
	}
	s, err := createSegment(l.dir, l.next)
	if err != nil {
		return err
	}
	if old.alloc > old.size {
		// Releasing the preallocated tail can wait on the writeback of the
		// last page and on the journal; no appender needs to wait with it.
		// A failure only leaves the blocks allocated until the segment is
		// deleted or the log is opened again.
		f, size := old.log, old.size
		old.alloc = size
		l.background.Go(func() { _ = f.Truncate(size) })
	}
	l.segs = append(l.segs, s)
	l.dirGen++
	// Under FsyncNever only an explicit Sync reads the list.
	l.unsynced = append(l.unsynced, old)
	return nil
}

func (l *Log) markDurable(w uint64) {
	for {
		d := l.durable.Load()
		if d >= w || l.durable.CompareAndSwap(d, w) {
			return
		}
	}
}

// syncUpTo returns once every byte appended before the logical position
// target is synced. Callers that arrive while a sync runs wait for it and
// are usually covered by it.
//
// The files are synced without l.mu, so appends and reads go on meanwhile:
// a snapshot taken under the lock says which bytes the sync covers (the
// sealed segments not yet synced, oldest first, then the active one, up to
// l.written), and only that prefix is declared durable afterwards.
func (l *Log) syncUpTo(target uint64) error {
	if l.durable.Load() >= target {
		return nil
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.durable.Load() >= target {
		return nil
	}
	return l.syncNow()
}

// syncNow syncs everything appended so far and the directory. Called with
// l.syncMu held.
func (l *Log) syncNow() error {
	l.mu.RLock()
	if err := l.usable(); err != nil {
		l.mu.RUnlock()
		return err
	}
	sealed := append([]*segment(nil), l.unsynced...)
	active := l.active().log
	w := l.written
	gen := l.dirGen
	dirty := gen != l.dirSynced
	l.mu.RUnlock()
	l.syncStart.Store(l.opts.Clock.Now().UnixNano())
	l.syncTarget.Store(w)

	for _, s := range sealed {
		if err := errors.Join(l.syncFile(s.log), l.syncFile(s.index)); err != nil {
			return err
		}
	}
	if dirty {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	if err := l.syncFile(active); err != nil {
		return err
	}

	l.mu.Lock()
	if len(sealed) > 0 {
		l.unsynced = slices.DeleteFunc(l.unsynced, func(s *segment) bool { return slices.Contains(sealed, s) })
	}
	l.dirSynced = max(l.dirSynced, gen)
	l.mu.Unlock()
	l.markDurable(w)
	return nil
}

// syncFile forces f to stable storage. A file closed meanwhile belonged to a
// segment that Purge or DeleteOldestSegments removed, or that Close synced
// itself: there is nothing left to make durable.
func (l *Log) syncFile(f *os.File) error {
	if err := l.fsync(f); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

func (l *Log) flusher() {
	defer close(l.done)
	t := l.opts.Clock.NewTimer(l.opts.FsyncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C():
			t.Reset(l.opts.FsyncInterval)
			l.mu.Lock()
			if l.closed {
				l.mu.Unlock()
				return
			}
			if l.failed != nil {
				l.mu.Unlock()
				continue
			}
			s := l.active()
			if err := s.flushIndex(); err != nil {
				l.opts.Logger.Warn("partlog: index write failed", "segment", s.index.Name(), "err", err)
			}
			idle := l.durable.Load() >= l.written && l.dirGen == l.dirSynced
			l.mu.Unlock()
			if idle {
				continue
			}
			l.syncMu.Lock()
			err := l.syncNow()
			l.syncMu.Unlock()
			if err != nil && !errors.Is(err, ErrClosed) {
				l.opts.Logger.Error("partlog: background fsync failed", "dir", l.dir, "err", err)
			}
		}
	}
}

// Sync flushes the index and forces every appended byte to stable storage,
// whatever the policy.
func (l *Log) Sync() error {
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return err
	}
	err := l.active().flushIndex()
	l.mu.Unlock()
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	return errors.Join(err, l.syncNow())
}

// Read appends to dst the stored batch records covering
// [fromOffset, fromOffset+maxCount), sliced with message.AppendSlice where
// the range starts or ends inside a batch, and returns the extended dst and
// the number of messages appended. An offset below the first stored one
// reads from the first; at or past NextOffset nothing is appended.
func (l *Log) Read(fromOffset uint64, maxCount uint32, dst []byte) ([]byte, uint32, error) {
	return l.ReadLimit(fromOffset, maxCount, 0, dst)
}

// ReadLimit is Read that stops before appending a record that would take the
// bytes appended past maxBytes, except that the first record is always
// appended. maxBytes <= 0 means no limit. A poll reply must fit a frame, so
// a server passes its frame budget here.
func (l *Log) ReadLimit(fromOffset uint64, maxCount uint32, maxBytes int, dst []byte) ([]byte, uint32, error) {
	if maxCount == 0 {
		return dst, 0, nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return dst, 0, ErrClosed
	}
	si, ei, ok := l.locate(fromOffset)
	if !ok {
		return dst, 0, nil
	}
	start := len(dst)
	var got uint32
	for ; si < len(l.segs) && got < maxCount; si, ei = si+1, 0 {
		s := l.segs[si]
		for ei < len(s.entries) && got < maxCount {
			e := s.entries[ei]
			if e.end() <= fromOffset {
				ei++
				continue
			}
			whole := e.base >= fromOffset && e.count <= maxCount-got
			if !whole {
				if maxBytes > 0 && len(dst) > start && len(dst)-start+int(e.length) > maxBytes {
					return dst, got, nil
				}
				var err error
				var n uint32
				dst, n, err = l.readSliced(s, e, fromOffset, maxCount-got, dst)
				if err != nil {
					return dst[:start], 0, err
				}
				got += n
				ei++
				continue
			}
			// Coalesce the run of whole batches that follows into one pread.
			j := ei
			var bytes int64
			var msgs uint32
			for j < len(s.entries) {
				f := s.entries[j]
				if f.base < fromOffset || f.count > maxCount-got-msgs {
					break
				}
				if maxBytes > 0 && (len(dst) > start || j > ei) && int64(len(dst)-start)+bytes+int64(f.length) > int64(maxBytes) {
					break
				}
				bytes += int64(f.length)
				msgs += f.count
				j++
			}
			if j == ei {
				return dst, got, nil
			}
			at := len(dst)
			dst = grow(dst, int(bytes))
			if _, err := s.log.ReadAt(dst[at:], e.pos); err != nil {
				return dst[:start], 0, fmt.Errorf("partlog: read %s at %d: %w", s.log.Name(), e.pos, err)
			}
			if err := checkRun(dst[at:], s.entries[ei:j]); err != nil {
				return dst[:start], 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.log.Name(), err)
			}
			got += msgs
			ei = j
		}
	}
	return dst, got, nil
}

func (l *Log) readSliced(s *segment, e entry, from uint64, maxCount uint32, dst []byte) ([]byte, uint32, error) {
	bp, _ := l.scratch.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer l.scratch.Put(bp)
	// A few messages of a large batch (a consumer checking one offset, say) are found in a
	// prefix of it: read about twice their average share first, and the whole batch only when
	// the prefix falls short.
	skip := uint64(0)
	if from > e.base {
		skip = from - e.base
	}
	want := min(uint64(maxCount), uint64(e.count)-min(skip, uint64(e.count)))
	avg := (uint64(e.length) - message.BatchHeaderSize) / uint64(max(e.count, 1))
	if guess := message.BatchHeaderSize + 2*(skip+want)*avg + 4096; guess < uint64(e.length)/2 {
		buf := grow((*bp)[:0], int(guess))
		*bp = buf
		if _, err := s.log.ReadAt(buf, e.pos); err != nil {
			return dst, 0, fmt.Errorf("partlog: read %s at %d: %w", s.log.Name(), e.pos, err)
		}
		if err := checkHead(buf, e); err != nil {
			return dst, 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.log.Name(), err)
		}
		// AppendSlice stops at the first frame the prefix cuts: enough frames means a
		// whole answer.
		at := len(dst)
		out, n := message.AppendSlice(dst, buf, from, maxCount)
		if uint64(n) == want {
			return out, n, nil
		}
		dst = out[:at]
	}
	buf := grow((*bp)[:0], int(e.length))
	*bp = buf
	if _, err := s.log.ReadAt(buf, e.pos); err != nil {
		return dst, 0, fmt.Errorf("partlog: read %s at %d: %w", s.log.Name(), e.pos, err)
	}
	if err := checkRun(buf, []entry{e}); err != nil {
		return dst, 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.log.Name(), err)
	}
	dst, n := message.AppendSlice(dst, buf, from, maxCount)
	return dst, n, nil
}

// checkRun compares the headers of records read back to back with their
// index entries, a cheap guard against handing out the wrong bytes.
func checkRun(b []byte, entries []entry) error {
	for i, e := range entries {
		if err := checkHead(b, e); err != nil {
			return err
		}
		if i < len(entries)-1 {
			b = b[min(int(e.length), len(b)):]
		}
	}
	return nil
}

// checkHead compares the header at the start of b with e.
func checkHead(b []byte, e entry) error {
	le := binary.LittleEndian
	if len(b) < message.BatchHeaderSize {
		return fmt.Errorf("short read at offset %d", e.base)
	}
	if le.Uint64(b[8:]) != e.base || le.Uint64(b[32:]) != uint64(e.length) || le.Uint32(b[48:]) != e.count {
		return fmt.Errorf("batch at offset %d has a different header", e.base)
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n+len(b)/4)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// locate finds the segment and entry holding offset, or the first batch
// after it. Called with l.mu held.
func (l *Log) locate(offset uint64) (int, int, bool) {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	if si < 0 {
		si = 0
	}
	for ; si < len(l.segs); si++ {
		s := l.segs[si]
		ei := sort.Search(len(s.entries), func(i int) bool { return s.entries[i].end() > offset })
		if ei < len(s.entries) {
			return si, ei, true
		}
	}
	return 0, 0, false
}

// FirstOffset is the offset of the oldest stored message, or NextOffset when
// nothing is stored.
func (l *Log) FirstOffset() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segs {
		if len(s.entries) > 0 {
			return s.entries[0].base
		}
	}
	return l.next
}

// NextOffset is the offset the next appended message gets (0 when the log
// has never held a message since creation or Purge).
func (l *Log) NextOffset() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.next
}

// SizeBytes is the total size of the stored batch records.
func (l *Log) SizeBytes() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n uint64
	for _, s := range l.segs {
		n += uint64(s.size)
	}
	return n
}

// MessageCount is the number of stored messages.
func (l *Log) MessageCount() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n uint64
	for _, s := range l.segs {
		n += s.messages
	}
	return n
}

// SegmentCount is the number of segments, the active one included.
func (l *Log) SegmentCount() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segs)
}

// OffsetForTimestamp returns the first offset whose batch was appended at or
// after tsMicros, or false if no stored batch was.
func (l *Log) OffsetForTimestamp(tsMicros uint64) (uint64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segs {
		n := len(s.entries)
		if n == 0 || s.entries[n-1].ts < tsMicros {
			continue
		}
		i := sort.Search(n, func(i int) bool { return s.entries[i].ts >= tsMicros })
		return s.entries[i].base, true
	}
	return 0, false
}

// DeleteOldestSegments removes up to n of the oldest segments with their
// messages. Removing the active segment starts an empty one at NextOffset,
// so offsets keep growing.
func (l *Log) DeleteOldestSegments(n int) error {
	if n <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	n = min(n, len(l.segs))
	if n == len(l.segs) {
		s, err := createSegment(l.dir, l.next)
		if errors.Is(err, os.ErrExist) {
			// The active segment is empty and already starts at next:
			// replace it in place.
			return l.replaceAll(l.next)
		}
		if err != nil {
			return err
		}
		l.segs = append(l.segs, s)
	}
	var errs []error
	gone := slices.Clone(l.segs[:n])
	for _, s := range gone {
		errs = append(errs, os.Remove(s.log.Name()), os.Remove(s.index.Name()))
	}
	l.segs = append(l.segs[:0], l.segs[n:]...)
	l.forget(gone)
	// A deleted segment that reappears after a power failure holds offsets
	// below the first kept one and is removed again by the next retention
	// pass, so the directory is synced with the next sync rather than here.
	l.dirGen++
	return errors.Join(errs...)
}

// forget drops deleted segments from the sync list and closes their files in
// the background. Their names are already removed, and closing the last
// descriptor of an unlinked file is what frees its page cache and blocks,
// which costs about as much as writing them did: the caller and the appenders
// behind l.mu need not wait for that. Close waits for it. Called with l.mu
// held.
func (l *Log) forget(gone []*segment) {
	l.unsynced = slices.DeleteFunc(l.unsynced, func(s *segment) bool { return slices.Contains(gone, s) })
	files := make([]*os.File, 0, 2*len(gone))
	for _, s := range gone {
		files = append(files, s.log, s.index)
	}
	l.background.Go(func() {
		for _, f := range files {
			// The file is unlinked: an error closing it loses nothing.
			_ = f.Close()
		}
	})
}

// replaceAll removes every segment and starts an empty one at base. Called
// with l.mu held.
func (l *Log) replaceAll(base uint64) error {
	var errs []error
	for _, s := range l.segs {
		errs = append(errs, os.Remove(s.log.Name()), os.Remove(s.index.Name()))
	}
	l.forget(l.segs)
	l.segs = nil
	if err := errors.Join(errs...); err != nil {
		l.failed = fmt.Errorf("partlog: removing segments: %w", err)
		return l.failed
	}
	s, err := createSegment(l.dir, base)
	if err != nil {
		l.failed = fmt.Errorf("partlog: creating segment: %w", err)
		return l.failed
	}
	l.segs = []*segment{s}
	l.next = base
	l.dirGen++
	if err := syncDir(l.dir); err != nil {
		return err
	}
	// Nothing appended before is kept, so nothing remains to sync.
	l.dirSynced = l.dirGen
	l.markDurable(l.written)
	return nil
}

// Purge removes every message; offsets restart at 0.
func (l *Log) Purge() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	return l.replaceAll(0)
}

// Close syncs (unless the policy is FsyncNever) and closes the log. Further calls return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	var errs []error
	if len(l.segs) > 0 && l.failed == nil {
		s := l.active()
		errs = append(errs, s.flushIndex())
		if l.opts.Fsync != FsyncNever {
			for _, u := range l.unsynced {
				errs = append(errs, u.log.Sync(), u.index.Sync())
			}
			errs = append(errs, s.log.Sync(), s.index.Sync())
			if l.dirGen != l.dirSynced {
				errs = append(errs, syncDir(l.dir))
			}
		}
	}
	l.unsynced = nil
	errs = append(errs, l.closeSegments())
	l.mu.Unlock()
	if l.stop != nil {
		close(l.stop)
		<-l.done
	}
	l.background.Wait()
	return errors.Join(errs...)
}

// Remove closes the log and deletes its directory.
func (l *Log) Remove() error {
	err := l.Close()
	if errors.Is(err, ErrClosed) {
		err = nil
	}
	return errors.Join(err, os.RemoveAll(l.dir))
}

// Dir is the directory the log owns.
func (l *Log) Dir() string { return l.dir }
