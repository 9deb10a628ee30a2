package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// withAttrs is a producer's batch b with its attributes ORed with attrs, its CRC made again.
func withAttrs(b []byte, attrs int16) []byte {
	out := append([]byte(nil), b...)
	binary.BigEndian.PutUint16(out[21:], binary.BigEndian.Uint16(out[21:])|uint16(attrs))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}

// storedTxnBatch is a transactional batch of producer pid at epoch, as a store holds it at base.
func storedTxnBatch(t testing.TB, pid int64, epoch int16, base uint64, values ...string) []byte {
	t.Helper()
	var recs []trec
	for i, v := range values {
		recs = append(recs, trec{Value: []byte(v), TS: 1_700_000_000_000 + int64(i)})
	}
	kb, _, err := nextBatch(withAttrs(kafkaBatch(t, codecNone, recs, pid, epoch, 0), attrTransactional))
	if err != nil {
		t.Fatal(err)
	}
	c := getConverter(new(Metrics))
	defer putConverter(c)
	batch, err := c.toIggy(&kb, &idGen{}, 1<<20)
	if err != nil {
		t.Fatalf("toIggy of a transactional batch: %v", err)
	}
	return storeLike(t, batch, base)
}

func storedMarker(t testing.TB, pid int64, epoch int16, base uint64, commit bool) []byte {
	t.Helper()
	b, err := markerBatch(message.MakeID(base, 1), 1_700_000_000_000_000, pid, epoch, commit)
	if err != nil {
		t.Fatal(err)
	}
	return storeLike(t, b, base)
}

// A transactional batch goes back with its producer and the transactional bit; a marker goes
// back as Kafka's control batch (commit or abort) of its producer, and is left out of message
// sets; a client's control batch, and a transactional batch without a producer, are refused.
func TestTransactionalBatchesAndMarkers(t *testing.T) {
	c := getConverter(new(Metrics))
	defer putConverter(c)
	out, n, _, err := c.appendKafka(nil, storedTxnBatch(t, 7, 2, 10, "a", "b"), 0)
	if err != nil || n != 2 {
		t.Fatalf("appendKafka: %d records, %v", n, err)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(out); err != nil {
		t.Fatal(err)
	}
	if rb.Attributes&attrTransactional == 0 || rb.Attributes&attrControl != 0 || rb.ProducerID != 7 || rb.ProducerEpoch != 2 || rb.FirstOffset != 10 {
		t.Fatalf("transactional batch fetched as %+v", rb)
	}
	for _, commit := range []bool{true, false} {
		out, n, next, err := c.appendKafka(nil, storedMarker(t, 7, 2, 12, commit), 0)
		if err != nil || n != 1 || next != 13 {
			t.Fatalf("marker: %d records, next %d, %v", n, next, err)
		}
		var cb kmsg.RecordBatch
		if err := cb.ReadFrom(out); err != nil {
			t.Fatal(err)
		}
		if cb.Attributes != attrTransactional|attrControl || cb.ProducerID != 7 || cb.ProducerEpoch != 2 || cb.FirstOffset != 12 || cb.NumRecords != 1 {
			t.Fatalf("marker fetched as %+v", cb)
		}
		var rec kmsg.Record
		if err := rec.ReadFrom(cb.Records); err != nil {
			t.Fatal(err)
		}
		want := []byte{0, 0, 0, 0}
		if commit {
			want[3] = 1
		}
		if string(rec.Key) != string(want) || len(rec.Value) != 6 {
			t.Fatalf("control record key %v value %v", rec.Key, rec.Value)
		}
		if _, n, _, err := c.appendLegacy(nil, storedMarker(t, 7, 2, 12, commit), 0, 1); err != nil || n != 0 {
			t.Fatalf("a marker in a message set: %d records, %v", n, err)
		}
	}
	plain := kafkaBatch(t, codecNone, []trec{{Value: []byte("x"), TS: 1}}, 7, 2, 0)
	for name, in := range map[string][]byte{
		"control batch":                  withAttrs(plain, attrTransactional|attrControl),
		"transactional without producer": withAttrs(kafkaBatch(t, codecNone, []trec{{Value: []byte("x"), TS: 1}}, -1, -1, -1), attrTransactional),
	} {
		kb, _, err := nextBatch(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.toIggy(&kb, &idGen{}, 1<<20); !errors.Is(err, kerr.InvalidRecord) {
			t.Errorf("%s: %v, want INVALID_RECORD", name, err)
		}
	}
}

// The index of a partition's transactions: an aborted transaction is listed from its first
// offset to its marker, a committed one is not, an open one holds the last stable offset, and a
// marker of a producer with no open transaction changes nothing.
func TestTxnIndex(t *testing.T) {
	var ix txnIndex
	ix.open = map[int64]int64{}
	for _, rec := range [][]byte{
		storedTxnBatch(t, 7, 0, 0, "a", "b"),
		storedTxnBatch(t, 7, 0, 2, "c"),
		storedMarker(t, 7, 0, 3, false),
		storedMarker(t, 7, 0, 4, false), // a second end, written again after a handover
		storedTxnBatch(t, 8, 0, 5, "d"),
		storedMarker(t, 8, 0, 6, true),
		storedTxnBatch(t, 9, 0, 7, "open"),
	} {
		if err := ix.add(rec); err != nil {
			t.Fatal(err)
		}
	}
	if ix.next != 8 {
		t.Fatalf("read up to %d, want 8", ix.next)
	}
	if len(ix.aborted) != 1 || ix.aborted[0] != (abortedTxn{pid: 7, first: 0, last: 3}) {
		t.Fatalf("aborted %+v", ix.aborted)
	}
	if len(ix.open) != 1 || ix.open[9] != 7 {
		t.Fatalf("open %+v", ix.open)
	}
}

// A marker carries its producer but holds no sequence: a gateway that rebuilds the producer's
// state from Iggy after a marker takes the producer's next batch, and the READ_COMMITTED index
// of a fresh gateway finds the aborted transaction.
func TestMarkerIsNoBatchOfItsProducer(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "txn", true); err != nil {
		t.Fatal(err)
	}
	batch := func(seq int32) []byte {
		return withAttrs(kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("s", seq), 2), 5, 0, seq), attrTransactional)
	}
	if _, err := b.produce(ctx, m, "txn", 0, batch(0)); err != nil {
		t.Fatal(err)
	}
	marker, err := markerBatch(message.MakeID(1, 2), 1_700_000_000_000_000, 5, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.send(ctx, b.cfg.Stream, "txn", 0, marker); err != nil {
		t.Fatal(err)
	}
	other := newMemBridge(t, m) // knows nothing of producer 5: rebuilds it from the partition
	if _, err := other.produce(ctx, m, "txn", 0, batch(2)); err != nil {
		t.Fatalf("the batch after a marker: %v", err)
	}
	lso, aborted, err := other.stable(ctx, m, "txn", 0, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if lso != 3 || len(aborted) != 1 || aborted[0].ProducerID != 5 || aborted[0].FirstOffset != 0 {
		t.Fatalf("stable: lso %d, aborted %+v; want 3 and producer 5 from 0", lso, aborted)
	}
}

// The abort a fence or a timeout writes, at a bumped epoch, fences the producer's older epoch at
// the partition too, also at a gateway that rebuilds the producer's state from Iggy.
func TestMarkerFencesOlderEpoch(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "fence", true); err != nil {
		t.Fatal(err)
	}
	batch := func(epoch int16, seq int32) []byte {
		return withAttrs(kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("e", epoch, "s", seq), 1), 5, epoch, seq), attrTransactional)
	}
	if _, err := b.produce(ctx, m, "fence", 0, batch(3, 0)); err != nil {
		t.Fatal(err)
	}
	marker, err := markerBatch(message.MakeID(1, 2), 1_700_000_000_000_000, 5, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.send(ctx, b.cfg.Stream, "fence", 0, marker); err != nil {
		t.Fatal(err)
	}
	other := newMemBridge(t, m)
	if _, err := other.produce(ctx, m, "fence", 0, batch(3, 1)); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the fenced epoch after the marker: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if _, err := other.produce(ctx, m, "fence", 0, batch(5, 0)); err != nil {
		t.Fatalf("the next incarnation: %v", err)
	}
}

// A partition shorter than what the index read (deleted and created again by another gateway)
// is indexed afresh: a transaction the old one left open no longer holds its readers.
func TestTxnIndexReadAfreshWhenShorter(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "again", true); err != nil {
		t.Fatal(err)
	}
	open := withAttrs(kafkaBatch(t, codecNone, valueRecs("open", 3), 5, 0, 0), attrTransactional)
	if _, err := b.produce(ctx, m, "again", 0, open); err != nil {
		t.Fatal(err)
	}
	if lso, _, err := b.stable(ctx, m, "again", 0, 0, 3); err != nil || lso != 0 {
		t.Fatalf("lso %d, %v; want 0 (a transaction open at 0)", lso, err)
	}
	if err := m.deleteTopic(ctx, b.cfg.Stream, "again"); err != nil {
		t.Fatal(err)
	}
	other := newMemBridge(t, m)
	if _, err := other.topicInfo(ctx, m, "again", true); err != nil {
		t.Fatal(err)
	}
	if _, err := other.produce(ctx, m, "again", 0, kafkaBatch(t, codecNone, valueRecs("plain", 1), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	if lso, _, err := b.stable(ctx, m, "again", 0, 0, 1); err != nil || lso != 1 {
		t.Fatalf("lso %d, %v after the partition was created again; want 1", lso, err)
	}
}

// fetchedBatches is the magic-2 batches of one fetch of topic/0 at offset by b, decoded.
func fetchedBatches(t *testing.T, b *Bridge, m *memStore, topic string, offset int64) []kmsg.RecordBatch {
	t.Helper()
	res, err := b.fetch(context.Background(), m, topic, 0, offset, 1<<20, 12)
	if err != nil {
		t.Fatalf("fetch at %d: %v", offset, err)
	}
	defer res.Release()
	var out []kmsg.RecordBatch
	for rest := res.Records; len(rest) > 0; {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(rest); err != nil {
			t.Fatalf("fetch at %d: %v", offset, err)
		}
		out = append(out, rb)
		rest = rest[12+int(rb.Length):]
	}
	return out
}

// A fetch from inside a transactional batch whose start the gateway does not know (its tail
// forgot it, or another gateway wrote it) gets the records from its offset on in a batch that
// still carries the producer and the transactional bit, read from the batch's first message, so
// a READ_COMMITTED client drops them when the transaction was aborted; a batch of no
// transaction read from inside stays one of no producer, and a fetch at a batch's start reads
// nothing more.
func TestFetchInsideTransactionalBatch(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "mid", true); err != nil {
		t.Fatal(err)
	}
	txnBatch := withAttrs(kafkaBatch(t, codecNone, valueRecs("t", 4), 9, 3, 0), attrTransactional) // 0-3
	plainBatch := kafkaBatch(t, codecNone, valueRecs("p", 3), -1, -1, -1)                          // 4-6
	for _, batch := range [][]byte{txnBatch, plainBatch} {
		if _, err := b.produce(ctx, m, "mid", 0, batch); err != nil {
			t.Fatal(err)
		}
	}
	b.part("mid", 0).tail.reset() // the tail forgot where the batches start
	other := newMemBridge(t, m)   // another gateway, which never knew
	for name, br := range map[string]*Bridge{"forgotten": b, "other gateway": other} {
		before := br.metrics.SliceHeads()
		got := fetchedBatches(t, br, m, "mid", 2)
		if len(got) != 2 || got[0].FirstOffset != 2 || got[0].NumRecords != 2 || got[1].FirstOffset != 4 {
			t.Fatalf("%s: fetch at 2 gave %+v", name, got)
		}
		if rb := got[0]; rb.Attributes&attrTransactional == 0 || rb.ProducerID != 9 || rb.ProducerEpoch != 3 {
			t.Errorf("%s: the slice of the transactional batch went out with attributes %#x, producer %d/%d", name, rb.Attributes, rb.ProducerID, rb.ProducerEpoch)
		}
		if rb := got[1]; rb.Attributes&attrTransactional != 0 || rb.ProducerID != -1 {
			t.Errorf("%s: the batch of no transaction went out with attributes %#x, producer %d", name, rb.Attributes, rb.ProducerID)
		}
		if n := br.metrics.SliceHeads() - before; n != 1 {
			t.Errorf("%s: %d reads of a batch's first message, want 1", name, n)
		}
		got = fetchedBatches(t, br, m, "mid", 5)
		if len(got) != 1 || got[0].FirstOffset != 5 || got[0].Attributes&attrTransactional != 0 || got[0].ProducerID != -1 {
			t.Errorf("%s: fetch inside the batch of no transaction gave %+v", name, got)
		}
		before = br.metrics.SliceHeads()
		if got := fetchedBatches(t, br, m, "mid", 4); len(got) != 1 || got[0].FirstOffset != 4 {
			t.Errorf("%s: fetch at 4 gave %+v", name, got)
		}
		if n := br.metrics.SliceHeads() - before; n != 0 {
			t.Errorf("%s: a fetch at a batch's start read %d first messages more", name, n)
		}
	}
}

// A log start inside a transactional batch (DeleteRecords to an offset in it): the READ_COMMITTED
// index of a gateway that reads the partition from there finds the transaction from the log
// start, aborted once its marker comes, open (holding the last stable offset at the log start)
// until then.
func TestTxnIndexFromInsideABatch(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "cut", true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.produce(ctx, m, "cut", 0, withAttrs(kafkaBatch(t, codecNone, valueRecs("t", 4), 9, 0, 0), attrTransactional)); err != nil {
		t.Fatal(err)
	}
	if low, err := b.deleteRecords(ctx, m, "cut", 0, 2); err != nil || low != 2 {
		t.Fatalf("DeleteRecords to 2: %d, %v", low, err)
	}
	if lso, aborted, err := newMemBridge(t, m).stable(ctx, m, "cut", 0, 2, 4); err != nil || lso != 2 || len(aborted) != 0 {
		t.Fatalf("open transaction from inside its batch: lso %d, aborted %+v, %v; want 2 and none", lso, aborted, err)
	}
	marker, err := markerBatch(message.MakeID(1, 2), 1_700_000_000_000_000, 9, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.send(ctx, b.cfg.Stream, "cut", 0, marker); err != nil {
		t.Fatal(err)
	}
	lso, aborted, err := newMemBridge(t, m).stable(ctx, m, "cut", 0, 2, 5)
	if err != nil || lso != 5 || len(aborted) != 1 || aborted[0].ProducerID != 9 || aborted[0].FirstOffset != 2 {
		t.Fatalf("aborted transaction from inside its batch: lso %d, aborted %+v, %v; want 5 and producer 9 from 2", lso, aborted, err)
	}
}

// A reader going through a partition at a gateway that knows none of its batches (another wrote
// them, or this one before a restart) starts each fetch on a batch's first message: a fetch
// whose poll count may have cut its last batch leaves that batch to the next fetch, which then
// reads no first message more and hands the batch back whole. (A batch about as large as the
// poll is kept, cut: a maxBytes below a few batches' records is not tried.)
func TestFetchesStayOnBatchStarts(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "seq", true); err != nil {
		t.Fatal(err)
	}
	const batches, per = 16, 100
	for i := range batches {
		if _, err := b.produce(ctx, m, "seq", 0, kafkaBatch(t, codecNone, valueRecs(fmt.Sprintf("batch %d, a value of some length", i), per), -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, maxBytes := range []int32{1 << 20, 256 << 10, 128 << 10} {
		other := newMemBridge(t, m)
		for off := int64(0); off < batches*per; {
			res, err := other.fetch(ctx, m, "seq", 0, off, maxBytes, 12)
			if err != nil {
				t.Fatal(err)
			}
			got := readBatches(t, res.Records)
			res.Release()
			if len(got) == 0 || got[0].Offset != off || off%per != 0 {
				t.Fatalf("maxBytes %d: a fetch at %d started inside a batch", maxBytes, off)
			}
			off = got[len(got)-1].Offset + 1
		}
		if n := other.metrics.SliceHeads(); n != 0 {
			t.Errorf("maxBytes %d: %d fetches started inside a batch", maxBytes, n)
		}
	}
}
