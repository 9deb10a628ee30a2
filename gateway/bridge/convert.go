package bridge

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// maxTSMillis is the largest Kafka timestamp whose microsecond form fits the
// origin timestamp (u64).
const maxTSMillis = math.MaxUint64 / 1000

// maxTSSpan is the widest spread of origin timestamps one Iggy batch can hold:
// every frame stores its distance to the smallest as a u32 of microseconds.
const maxTSSpan = math.MaxUint32 / 1000

// placeholder is the payload of a message whose Kafka value is null or empty:
// Iggy refuses empty payloads, so one zero byte stands in and kafka.flags says
// what it means.
var placeholder = []byte{0}

// idGen hands out Iggy message ids: a random per-bridge high half and a
// counter, unique without coordination and cheap enough for the record path.
type idGen struct {
	hi  uint64
	ctr atomic.Uint64
}

// converter holds the reusable buffers of one conversion so the per-record
// path allocates nothing once they have grown.
type converter struct {
	dec     []byte
	up      []byte // a magic 0/1 message set as one magic-2 batch (legacy.go)
	hdr     []byte // user headers of the message being built
	plain   []byte // records of a fetched batch before they are compressed
	recs    []krecord
	builder message.Builder
	meta    recMeta
	// out is how appendKafka and appendLegacy write batches: with out.set, every batch in
	// out.codec; with out.logAppendTime, stamped with the Iggy batch's append time.
	out fetchForm
	// firstID is the Iggy id toIggy gave the first message of its last batch.
	firstID [16]byte
	// plainLeft is how many more batches appendKafka writes uncompressed although their
	// producer compressed them, because compressing the partition's last batches did not pay.
	plainLeft int
	// head is the transaction of the Iggy batch whose base offset is headAt, for a slice of
	// it that starts past its first message, which alone says it (Bridge.sliceHead); the zero
	// batchTxn is no transaction's.
	head   batchTxn
	headAt uint64
	// metrics counts the header sections dropped: the bridge's that took the converter.
	metrics *Metrics
}

// Compression that saves less than 1/16 of a batch is not worth its CPU on either side: the
// next plainRun batches of the partition go out uncompressed, then compression is tried again.
// Only the "producer" fetch codec adapts; a codec the operator chose is always used.
const plainRun = 16

func paysOff(compressed, plain int) bool { return compressed < plain-plain/16 }

// Converters are kept in a small fixed cache in front of a sync.Pool: a
// pool is emptied by every second GC, and a converter's buffers take a
// batch's worth of growth to rebuild, so the hot few must survive GCs.
var (
	converterCache = make(chan *converter, 8)
	converterPool  = sync.Pool{New: func() any { return new(converter) }}
)

// getConverter takes a converter for a bridge whose counts are m.
func getConverter(m *Metrics) *converter {
	var c *converter
	select {
	case c = <-converterCache:
	default:
		c = converterPool.Get().(*converter)
	}
	c.metrics = m
	return c
}

func putConverter(c *converter) {
	c.metrics = nil
	if cap(c.dec) > 16<<20 {
		c.dec = nil
	}
	if cap(c.plain) > 16<<20 {
		c.plain = nil
	}
	if cap(c.up) > 16<<20 {
		c.up = nil
	}
	if c.builder.Size() > 16<<20 {
		c.builder = message.Builder{}
	}
	// The records and the header fields are views of the last batch converted: a produce
	// request's frame, or a poll reply. The converters kept in converterCache outlive every
	// collection, so views left in them would keep those buffers (a producer's request is up to
	// tens of MB) alive long after they were released: with many producers they held most of
	// the heap the memory limit allows, and the collector ran back to back.
	clear(c.recs)
	c.recs = c.recs[:0]
	c.meta.reset()
	c.out = fetchForm{}
	c.plainLeft = 0
	c.head, c.headAt = batchTxn{}, 0
	select {
	case converterCache <- c:
	default:
		converterPool.Put(c)
	}
}

// toIggy turns one decoded Kafka batch into one Iggy batch. The returned
// bytes belong to c and are valid until its next use. idempotent adds the
// producer fields to the first message.
func (c *converter) toIggy(kb *kbatch, ids *idGen, maxRecord int32) ([]byte, error) {
	if err := checkProduced(kb); err != nil {
		return nil, err
	}
	minTS, haveMin, err := c.decodeRecords(kb, maxRecord)
	if err != nil {
		return nil, err
	}
	b := &c.builder
	b.Reset()
	idBase := ids.ctr.Add(uint64(len(c.recs))) - uint64(len(c.recs))
	c.firstID = message.MakeID(idBase, ids.hi)
	for i := range c.recs {
		rec := &c.recs[i]
		ts := kb.FirstTimestamp + rec.TimestampDelta
		origin := uint64(minTS) * 1000
		storeTS := true
		if haveMin && ts >= minTS && ts <= maxTSMillis && ts-minTS <= maxTSSpan {
			origin, storeTS = uint64(ts)*1000, false
		}
		payload, flags := storedValue(rec)
		h, err := c.userHeaders(kb, i, rec, ts, storeTS, flags)
		if err != nil {
			return nil, err
		}
		// Add rather than Reserve: Reserve zeroes the space it hands out,
		// which costs as much as the copy it would save.
		b.Add(message.MakeID(idBase+uint64(i), ids.hi), origin, payload, h)
	}
	batch, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kerr.InvalidRecord, err)
	}
	return batch, nil
}

// checkProduced refuses a produced batch a client may not send: a control batch, a
// transactional one without a producer id, one without records or whose last offset delta does
// not match its count.
func checkProduced(kb *kbatch) error {
	if kb.Attributes&attrControl != 0 {
		return fmt.Errorf("%w: a control batch from a client", kerr.InvalidRecord)
	}
	if kb.Attributes&attrTransactional != 0 && kb.ProducerID < 0 {
		return fmt.Errorf("%w: a transactional batch without a producer id", kerr.InvalidRecord)
	}
	if kb.NumRecords <= 0 {
		return errCorrupt("record batch with %d records", kb.NumRecords)
	}
	if kb.LastOffsetDelta != kb.NumRecords-1 {
		return errCorrupt("lastOffsetDelta %d with %d records", kb.LastOffsetDelta, kb.NumRecords)
	}
	return nil
}

// decodeRecords decompresses kb's records and parses them into c.recs, checking their count,
// offset deltas and sizes (maxRecord). It returns the smallest valid timestamp among them
// (haveMin false when none is).
func (c *converter) decodeRecords(kb *kbatch, maxRecord int32) (minTS int64, haveMin bool, err error) {
	raw := kb.Records
	if kb.codec() != codecNone {
		c.dec, err = decompress(c.dec[:0], kb.codec(), raw)
		if err != nil {
			return 0, false, err
		}
		raw = c.dec
	}
	clear(c.recs) // no views of an earlier batch left past the new length
	c.recs = c.recs[:0]
	for len(raw) > 0 {
		if len(c.recs) == int(kb.NumRecords) {
			return 0, false, errCorrupt("record batch holds more than its %d records", kb.NumRecords)
		}
		c.recs = append(c.recs, krecord{})
		rec := &c.recs[len(c.recs)-1]
		if raw, err = nextRecord(raw, rec); err != nil {
			return 0, false, err
		}
		if rec.OffsetDelta != int32(len(c.recs)-1) {
			return 0, false, errCorrupt("record %d has offset delta %d", len(c.recs)-1, rec.OffsetDelta)
		}
		if size := len(rec.Key) + len(rec.Value) + len(rec.Headers); size > int(maxRecord) {
			return 0, false, fmt.Errorf("%w: record of %d bytes, limit %d", kerr.MessageTooLarge, size, maxRecord)
		}
		if ts := kb.FirstTimestamp + rec.TimestampDelta; ts >= 0 && ts <= maxTSMillis && (!haveMin || ts < minTS) {
			minTS, haveMin = ts, true
		}
	}
	if len(c.recs) != int(kb.NumRecords) {
		return 0, false, errCorrupt("record batch says %d records, holds %d", kb.NumRecords, len(c.recs))
	}
	return minTS, haveMin, nil
}

// storedValue is the Iggy payload of rec and the flags that tell a null or empty value (Iggy
// payloads are never empty: such a value is stored as a placeholder) and an empty key.
func storedValue(rec *krecord) ([]byte, uint8) {
	var flags uint8
	payload := rec.Value
	switch {
	case rec.ValueNull:
		flags |= flagValueNull
		payload = placeholder
	case len(rec.Value) == 0:
		flags |= flagValueEmpty
		payload = placeholder
	}
	if !rec.KeyNull && len(rec.Key) == 0 {
		flags |= flagKeyEmpty
	}
	return payload, flags
}

// userHeaders returns, in c.hdr, the Iggy user headers of record i of kb: its key, Kafka
// headers, timestamp when the message's own does not carry it (storeTS), flags, and on the
// first record the batch's codec, producer fields and transactional mark. It refuses headers
// larger than Iggy holds.
func (c *converter) userHeaders(kb *kbatch, i int, rec *krecord, ts int64, storeTS bool, flags uint8) ([]byte, error) {
	hl := chunkedLen(hdrKey, len(rec.Key))
	if rec.NumHeaders > 0 {
		hl += chunkedLen(hdrHeaders, len(rec.Headers))
	}
	if storeTS {
		hl += tlvItemLen(len(hdrTS), 8)
	}
	if flags != 0 {
		hl += tlvItemLen(len(hdrFlags), 1)
	}
	if i == 0 {
		hl += firstHeadersLen(kb)
	}
	if hl > maxUserHeaders {
		return nil, fmt.Errorf("%w: key and headers of %d bytes exceed the %d bytes Iggy user headers hold", kerr.InvalidRecord, hl, maxUserHeaders)
	}
	h := c.hdr[:0]
	h = appendChunked(h, hdrKey, rec.Key)
	if rec.NumHeaders > 0 {
		h = appendChunked(h, hdrHeaders, rec.Headers)
	}
	if storeTS {
		h = appendInt(h, hdrTS, kindInt64, 8, uint64(ts))
	}
	if flags != 0 {
		h = appendInt(h, hdrFlags, kindUint8, 1, uint64(flags))
	}
	if i == 0 {
		h = appendFirstHeaders(h, kb)
	}
	if len(h) != hl {
		return nil, fmt.Errorf("bridge: user headers of %d bytes, computed %d", len(h), hl)
	}
	c.hdr = h
	return h, nil
}

// firstHeadersLen is the size of the user headers only a batch's first record carries
// (appendFirstHeaders).
func firstHeadersLen(kb *kbatch) int {
	n := 0
	if kb.codec() != codecNone {
		n += tlvItemLen(len(hdrCodec), 1)
	}
	if kb.ProducerID >= 0 {
		n += tlvItemLen(len(hdrPID), 8) + tlvItemLen(len(hdrEpoch), 2) + tlvItemLen(len(hdrSeq), 4) + tlvItemLen(len(hdrCount), 4)
	}
	if kb.Attributes&attrTransactional != 0 {
		n += tlvItemLen(len(hdrTxn), 1)
	}
	return n
}

// appendFirstHeaders appends the user headers of a batch's first record: the producer's codec,
// the idempotent producer's fields, the transactional mark.
func appendFirstHeaders(h []byte, kb *kbatch) []byte {
	if kb.codec() != codecNone {
		h = appendInt(h, hdrCodec, kindUint8, 1, uint64(kb.codec()))
	}
	if kb.ProducerID >= 0 {
		h = appendInt(h, hdrPID, kindInt64, 8, uint64(kb.ProducerID))
		h = appendInt(h, hdrEpoch, kindInt16, 2, uint64(uint16(kb.ProducerEpoch)))
		h = appendInt(h, hdrSeq, kindInt32, 4, uint64(uint32(kb.BaseSequence)))
		h = appendInt(h, hdrCount, kindInt32, 4, uint64(uint32(kb.NumRecords)))
	}
	if kb.Attributes&attrTransactional != 0 {
		h = appendInt(h, hdrTxn, kindUint8, 1, txnData)
	}
	return h
}

// controlKey are the keys of a commit and an abort control record.
var controlKey = [2][4]byte{{0, 0, 0, 1}, {0, 0, 0, 0}}

// markerValue is the value of a control record: version 0, coordinator epoch 0.
var markerValue = []byte{0, 0, 0, 0, 0, 0}

// fetchOut is one message as Kafka sees it, decoded from an Iggy frame.
type fetchOut struct {
	offset    int64
	ts        int64
	key       []byte
	keyNull   bool
	value     []byte
	valueNull bool
	headers   []byte // Kafka header section, nil for none
}

func (c *converter) decodeFrame(base uint64, origin uint64, f *message.Frame, out *fetchOut) {
	m := &c.meta
	if len(f.UserHeaders) == 0 {
		m.reset()
	} else {
		m.parse(f.UserHeaders)
	}
	out.offset = int64(base + uint64(f.OffsetDelta))
	if m.hasTS {
		out.ts = m.ts
	} else {
		out.ts = int64((origin + uint64(f.TimestampDelta)) / 1000)
	}
	out.key, out.keyNull = m.key, m.keyNull
	if m.flags&flagKeyEmpty != 0 {
		out.key, out.keyNull = nil, false
	}
	out.value, out.valueNull = f.Payload, false
	switch {
	case m.flags&flagValueNull != 0:
		out.value, out.valueNull = nil, true
	case m.flags&flagValueEmpty != 0:
		out.value = nil
	}
	out.headers = m.hdrs
	if len(m.hdrs) > 0 && !validKafkaHeaders(m.hdrs) {
		out.headers = nil
		c.metrics.droppedHeaders.Add(1)
	}
}

// batchStart is the header of a rebuilt batch whose first record is out, and the codec it goes
// out in: the one asked for (Config.FetchCodec, compression.type), else the producer's (codec),
// except while compressing has not paid off lately (plainLeft); a transaction's data batch
// carries its producer, and a commit or abort marker goes back as Kafka's control batch,
// uncompressed.
func (c *converter) batchStart(out *fetchOut, codec int, txn uint8, pid int64, epoch int16) (kbatch, int) {
	kb := kbatch{BaseOffset: out.offset, LeaderEpoch: 0, FirstTimestamp: out.ts, MaxTimestamp: out.ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	if c.out.set {
		codec = c.out.codec
	} else if codec != codecNone && c.plainLeft > 0 {
		c.plainLeft--
		codec = codecNone
	}
	switch txn {
	case txnData:
		kb.Attributes |= attrTransactional
		kb.ProducerID, kb.ProducerEpoch = pid, epoch
	case txnCommit, txnAbort:
		kb.Attributes |= attrTransactional | attrControl
		kb.ProducerID, kb.ProducerEpoch = pid, epoch
		codec = codecNone
	}
	return kb, codec
}

// compressAside compresses the records gathered in c.plain into dst, after the batch header,
// in codec, and marks kb with it. By default the batch goes back the way it was produced:
// clients tune their decompression limits and pools on it. A slice that starts past the batch's
// first message does not know the codec and goes out uncompressed, which every client reads as
// well. A FetchCodec setting overrides both. When compressing did not pay off, the next
// plainRun batches go out uncompressed.
func (c *converter) compressAside(dst []byte, codec int, kb *kbatch) ([]byte, error) {
	at := len(dst) // compress appends after the batch header w.begin wrote
	dst, err := compress(dst, codec, c.plain)
	if err != nil {
		return dst, err
	}
	kb.Attributes |= int16(codec)
	if !c.out.set && !paysOff(len(dst)-at, len(c.plain)) {
		c.plainLeft = plainRun
	}
	return dst, nil
}

// appendKafka appends one Iggy batch record (as a poll returns it, possibly a
// slice of a stored batch) to dst as one uncompressed magic-2 Kafka batch.
// Frames below from are skipped. It reports the number of records written and
// the offset after the last.
func (c *converter) appendKafka(dst, rec []byte, from int64) ([]byte, int, int64, error) {
	h, err := message.ParseBatchHeader(rec)
	if err != nil {
		return dst, 0, 0, err
	}
	it := message.Frames(rec)
	var (
		w     kbatchWriter
		kb    kbatch
		out   fetchOut
		n     int
		next  int64
		start = len(dst)
		codec int
		// txn, pid and epoch are the transaction fields of the batch's first message.
		txn   uint8
		pid   int64
		epoch int16
	)
	if c.head.txn != 0 && c.headAt == h.BaseOffset {
		// A slice that starts past the batch's first message: what that message says was
		// read for it.
		txn, pid, epoch = c.head.txn, c.head.pid, c.head.epoch
	}
	aside := false // records go to c.plain, to be compressed into dst
	var f message.Frame
	for it.NextInto(&f) {
		c.decodeFrame(h.BaseOffset, h.OriginTimestamp, &f, &out)
		if f.OffsetDelta == 0 {
			codec = int(c.meta.codec)
			if c.meta.txn != 0 && c.meta.hasPID {
				txn, pid, epoch = c.meta.txn, c.meta.pid, c.meta.epoch
			}
		}
		if out.offset < from {
			continue
		}
		if n == 0 {
			dst = w.begin(dst)
			// The codec is known by now: it rides on the batch's first
			// frame, which comes first. A compressed batch gathers its
			// records aside and is compressed straight into dst, so the
			// records are not copied twice.
			kb, codec = c.batchStart(&out, codec, txn, pid, epoch)
			if codec != codecNone {
				c.plain, aside = c.plain[:0], true
			}
		}
		if txn == txnCommit || txn == txnAbort {
			// The control record's key: version 0, type 1 commit or 0 abort.
			out.key, out.keyNull = controlKey[txn-txnCommit][:], false
		}
		delta := out.offset - kb.BaseOffset
		if delta < 0 || delta > math.MaxInt32 {
			return dst[:start], 0, 0, fmt.Errorf("bridge: stored offsets out of order in batch at %d", h.BaseOffset)
		}
		if aside {
			c.plain = appendKafkaRecord(c.plain, out.ts-kb.FirstTimestamp, int32(delta), out.key, out.keyNull, out.value, out.valueNull, out.headers)
		} else {
			dst = appendKafkaRecord(dst, out.ts-kb.FirstTimestamp, int32(delta), out.key, out.keyNull, out.value, out.valueNull, out.headers)
		}
		kb.MaxTimestamp = max(kb.MaxTimestamp, out.ts)
		kb.LastOffsetDelta = int32(delta)
		n++
		next = out.offset + 1
	}
	if err := it.Err(); err != nil {
		return dst[:start], 0, 0, err
	}
	if n == 0 {
		return dst, 0, from, nil
	}
	kb.NumRecords = int32(n)
	if c.out.logAppendTime {
		kb.Attributes |= attrLogAppendTime
		kb.MaxTimestamp = int64(h.BaseTimestamp / 1000)
	}
	if aside {
		if dst, err = c.compressAside(dst, codec, &kb); err != nil {
			return dst[:start], 0, 0, err
		}
	}
	return w.finish(dst, &kb), n, next, nil
}
