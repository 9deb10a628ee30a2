package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/zeebo/xxh3"
)

const (
	entrySize      = 40
	logSuffix      = ".log"
	indexSuffix    = ".index"
	nameDigits     = 20
	indexFlushSize = 64 << 10
	// preallocChunk is how far ahead of the data the active .log has its
	// blocks allocated.
	preallocChunk = 16 << 20
	// maxBatchBytes bounds what recovery will read as one record; the index
	// stores lengths as u32.
	maxBatchBytes = math.MaxUint32
)

// entry locates one batch of a segment.
type entry struct {
	base   uint64
	pos    int64
	ts     uint64
	length uint32
	count  uint32
}

func (e entry) end() uint64 { return e.base + uint64(e.count) }

func (e entry) put(b []byte) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], e.base)
	le.PutUint64(b[8:], uint64(e.pos))
	le.PutUint64(b[16:], e.ts)
	le.PutUint32(b[24:], e.length)
	le.PutUint32(b[28:], e.count)
	le.PutUint64(b[32:], xxh3.Hash(b[:32]))
}

func decodeEntry(b []byte) (entry, bool) {
	le := binary.LittleEndian
	if le.Uint64(b[32:]) != xxh3.Hash(b[:32]) {
		return entry{}, false
	}
	pos := le.Uint64(b[8:])
	if pos > math.MaxInt64 {
		return entry{}, false
	}
	return entry{
		base:   le.Uint64(b[0:]),
		pos:    int64(pos),
		ts:     le.Uint64(b[16:]),
		length: le.Uint32(b[24:]),
		count:  le.Uint32(b[28:]),
	}, true
}

// segment is one .log/.index pair. Its fields are guarded by Log.mu.
type segment struct {
	base     uint64
	log      *os.File
	index    *os.File
	size     int64 // bytes of the .log that hold verified or appended batches
	entries  []entry
	messages uint64

	indexDurable int64  // bytes of the .index written so far
	pending      []byte // encoded entries not yet written to the .index

	// alloc is the end of the blocks preallocated for the .log, past size
	// while the segment is active; noPrealloc is set once the filesystem
	// refused.
	alloc      int64
	noPrealloc bool
}

func segmentName(dir string, base uint64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%0*d%s", nameDigits, base, suffix))
}

// next is the offset after the segment's last message.
func (s *segment) next() uint64 {
	if len(s.entries) == 0 {
		return s.base
	}
	return s.entries[len(s.entries)-1].end()
}

func (s *segment) add(e entry) {
	s.entries = append(s.entries, e)
	s.messages += uint64(e.count)
	s.size = e.pos + int64(e.length)
	var buf [entrySize]byte
	e.put(buf[:])
	s.pending = append(s.pending, buf[:]...)
}

// flushIndex writes pending index entries. The index is a cache rebuilt on
// Open, so a failure here is reported but loses nothing.
func (s *segment) flushIndex() error {
	if len(s.pending) == 0 {
		return nil
	}
	n, err := s.index.WriteAt(s.pending, s.indexDurable)
	s.indexDurable += int64(n)
	s.pending = s.pending[n:]
	if len(s.pending) == 0 {
		s.pending = s.pending[:0:cap(s.pending)]
	}
	return err
}

// reserve allocates blocks for the next n bytes of the .log, and a chunk
// beyond them, ahead of the writes. Writing into allocated blocks spares the
// filesystem its per-block bookkeeping of delayed allocation (reserving
// space, tracking each block until writeback), which costs more CPU than
// copying the bytes into the page cache. The file's size does not change,
// so a crash leaves nothing for recovery to tell apart from data. On a
// refusal the segment writes as before.
func (s *segment) reserve(n, segmentBytes int64) {
	want := s.size + n
	if s.noPrealloc || want <= s.alloc {
		return
	}
	target := min(want+min(preallocChunk, segmentBytes), max(segmentBytes, want))
	from := max(s.alloc, s.size)
	if err := preallocate(s.log, from, target-from); err != nil {
		s.noPrealloc = true
		return
	}
	s.alloc = target
}

// trim releases the blocks preallocated past the data, so that a sealed or
// closed segment occupies only what it holds.
func (s *segment) trim() error {
	if s.alloc <= s.size {
		return nil
	}
	s.alloc = s.size
	return s.log.Truncate(s.size)
}

func (s *segment) close() error {
	err := s.flushIndex()
	return errors.Join(err, s.trim(), s.log.Close(), s.index.Close())
}

func createSegment(dir string, base uint64) (*segment, error) {
	lf, err := os.OpenFile(segmentName(dir, base, logSuffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	xf, err := os.OpenFile(segmentName(dir, base, indexSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		lf.Close()
		return nil, err
	}
	return &segment{base: base, log: lf, index: xf}, nil
}

// openSegment opens an existing segment and recovers it. A sealed segment
// with an intact index is trusted; otherwise every batch is verified and the
// .log is cut at the first one that fails.
func openSegment(dir string, base uint64, sealed bool, opts *Options) (*segment, error) {
	lf, err := os.OpenFile(segmentName(dir, base, logSuffix), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	xf, err := os.OpenFile(segmentName(dir, base, indexSuffix), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		lf.Close()
		return nil, err
	}
	s := &segment{base: base, log: lf, index: xf}
	if err := s.recover(sealed, opts); err != nil {
		lf.Close()
		xf.Close()
		return nil, err
	}
	return s, nil
}

func (s *segment) recover(sealed bool, opts *Options) error {
	logger := opts.Logger
	st, err := s.log.Stat()
	if err != nil {
		return err
	}
	logSize := st.Size()
	if allocatedPastEnd(st) {
		// Blocks preallocated for appends outlived a crash: release them.
		if err := s.log.Truncate(logSize); err != nil {
			return err
		}
	}
	stored, err := io.ReadAll(io.NewSectionReader(s.index, 0, math.MaxInt64))
	if err != nil {
		return err
	}
	if sealed {
		if entries, ok := trustIndex(stored, s.base, logSize); ok && lastBatchIntact(s.log, entries[len(entries)-1]) {
			s.entries = entries
			for _, e := range entries {
				s.messages += uint64(e.count)
			}
			s.size = logSize
			s.indexDurable = int64(len(stored))
			return nil
		}
	}

	entries, good, reason, err := scanLog(s.log, s.base, logSize)
	if err != nil {
		return err
	}
	if good < logSize {
		logger.Warn("partlog: cut corrupt or torn tail",
			"segment", s.log.Name(), "at", good, "dropped_bytes", logSize-good, "reason", reason)
		if err := s.log.Truncate(good); err != nil {
			return fmt.Errorf("partlog: truncating %s: %w", s.log.Name(), err)
		}
		if opts.Fsync != FsyncNever {
			if err := s.log.Sync(); err != nil {
				return err
			}
		}
	}
	s.entries = entries
	for _, e := range entries {
		s.messages += uint64(e.count)
	}
	s.size = good

	want := make([]byte, len(entries)*entrySize)
	for i, e := range entries {
		e.put(want[i*entrySize:])
	}
	if !bytes.Equal(want, stored) {
		if len(stored) > 0 || len(want) > 0 {
			logger.Info("partlog: rebuilt index", "segment", s.index.Name(), "entries", len(entries))
		}
		// Overwrite, then cut: truncating to zero first would make some
		// filesystems (ext4 auto_da_alloc) force a flush on close.
		if _, err := s.index.WriteAt(want, 0); err != nil {
			return err
		}
		if err := s.index.Truncate(int64(len(want))); err != nil {
			return err
		}
	}
	s.indexDurable = int64(len(want))
	return nil
}

// trustIndex decodes a sealed segment's index and accepts it only if every
// entry is intact and the entries tile the .log exactly from the segment base.
func trustIndex(b []byte, base uint64, logSize int64) ([]entry, bool) {
	if len(b)%entrySize != 0 || len(b) == 0 {
		return nil, false
	}
	entries := make([]entry, 0, len(b)/entrySize)
	var pos int64
	next := base
	for i := 0; i < len(b); i += entrySize {
		e, ok := decodeEntry(b[i : i+entrySize])
		if !ok || e.pos != pos || e.base != next || e.count == 0 || e.length < message.BatchHeaderSize {
			return nil, false
		}
		entries = append(entries, e)
		pos += int64(e.length)
		next = e.end()
	}
	return entries, pos == logSize
}

// lastBatchIntact verifies the last batch of a sealed segment whose index is
// trusted. A segment is sealed before it is synced, so a power failure can
// leave one whose index was written back in full while the end of its .log
// was not, or came back as zeros; the end is where that shows.
func lastBatchIntact(f *os.File, e entry) bool {
	rec := make([]byte, e.length)
	if _, err := f.ReadAt(rec, e.pos); err != nil {
		return false
	}
	h, err := message.ParseBatchHeader(rec)
	if err != nil || h.BaseOffset != e.base || h.Count != e.count {
		return false
	}
	_, err = message.Validate(rec)
	return err == nil
}

// scanLog verifies the batches of a .log from the start and returns their
// entries and the length of the valid prefix, with the reason the scan
// stopped short of logSize.
func scanLog(f *os.File, base uint64, logSize int64) ([]entry, int64, string, error) {
	var entries []entry
	r := chunkReader{f: f, size: logSize}
	var pos int64
	next := base
	for pos < logSize {
		hdr, err := r.at(pos, message.BatchHeaderSize)
		if err != nil {
			return nil, 0, "", err
		}
		if hdr == nil {
			return entries, pos, "partial batch header", nil
		}
		h, _ := message.ParseBatchHeader(hdr)
		if h.BatchLength < message.BatchHeaderSize || h.BatchLength > maxBatchBytes || h.BatchLength > uint64(logSize-pos) {
			return entries, pos, fmt.Sprintf("batch_length %d with %d bytes left", h.BatchLength, logSize-pos), nil
		}
		if h.BaseOffset != next {
			return entries, pos, fmt.Sprintf("base offset %d, expected %d", h.BaseOffset, next), nil
		}
		rec, err := r.at(pos, int(h.BatchLength))
		if err != nil {
			return nil, 0, "", err
		}
		if _, err := message.Validate(rec); err != nil {
			return entries, pos, err.Error(), nil
		}
		entries = append(entries, entry{base: h.BaseOffset, pos: pos, ts: h.BaseTimestamp, length: uint32(h.BatchLength), count: h.Count})
		pos += int64(h.BatchLength)
		next = h.BaseOffset + uint64(h.Count)
	}
	return entries, pos, "", nil
}

// chunkReader serves ranges of a file from a large read-ahead window, so that
// scanning small batches costs few syscalls.
type chunkReader struct {
	f     *os.File
	size  int64
	buf   []byte
	start int64
}

const scanChunk = 1 << 20

// at returns n bytes at pos, or nil if the file ends first.
func (r *chunkReader) at(pos int64, n int) ([]byte, error) {
	if pos+int64(n) > r.size {
		return nil, nil
	}
	if pos >= r.start && pos+int64(n) <= r.start+int64(len(r.buf)) {
		return r.buf[pos-r.start : pos-r.start+int64(n)], nil
	}
	want := int64(max(n, scanChunk))
	want = min(want, r.size-pos)
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, pos)
	if err != nil && !(errors.Is(err, io.EOF) && m == len(r.buf)) {
		if errors.Is(err, io.EOF) {
			// The file shrank under us; treat what is there as the end.
			r.buf = r.buf[:m]
			r.start = pos
			if m < n {
				return nil, nil
			}
			return r.buf[:n], nil
		}
		return nil, err
	}
	r.start = pos
	return r.buf[:n], nil
}
