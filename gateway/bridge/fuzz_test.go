package bridge

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// FuzzProduceRecords feeds arbitrary bytes as a produce request's Records:
// they must be refused or stored, never panic, and whatever is accepted must
// be a valid Iggy batch that reads back.
func FuzzProduceRecords(f *testing.F) {
	f.Add(kafkaBatch(f, codecNone, mixedRecords(), 1, 0, 0))
	f.Add(kafkaBatch(f, codecZstd, valueRecs("z", 3), -1, -1, -1))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := getConverter(new(Metrics))
		defer putConverter(c)
		ids := &idGen{}
		// Random bytes almost never carry a valid CRC-32C, which would keep
		// the fuzzer at the door; stamp the right one on the first batch so
		// it reaches the record decoder (the CRC check has its own tests).
		if len(in) >= kbHeaderLen {
			if end := kbLengthStart + int(int32(binary.BigEndian.Uint32(in[8:]))); end >= kbHeaderLen && end <= len(in) {
				in = append([]byte(nil), in...)
				binary.BigEndian.PutUint32(in[17:], crc32.Checksum(in[kbCRCStart:end], crc32c))
			}
		}
		for len(in) > 0 {
			kb, rest, err := nextBatch(in)
			if err != nil {
				return
			}
			in = rest
			batch, err := c.toIggy(&kb, ids, 1<<20)
			if err != nil {
				continue
			}
			if n, err := message.Validate(batch); err != nil || n != uint32(kb.NumRecords) {
				t.Fatalf("accepted batch fails admission: %d records, %v", n, err)
			}
			message.Stamp(batch, 0, 0, 1)
			out, n, _, err := c.appendKafka(nil, batch, 0)
			if err != nil || n != int(kb.NumRecords) {
				t.Fatalf("stored batch reads back %d of %d records: %v", n, kb.NumRecords, err)
			}
			if _, _, err := nextBatch(out); err != nil {
				t.Fatalf("fetched batch does not decode: %v", err)
			}
		}
	})
}

// FuzzFetchConvert feeds arbitrary bytes as stored Iggy batch records (what
// a poll returns, possibly written by any Iggy client) through the fetch
// conversions: no panic, and any batch produced must decode.
func FuzzFetchConvert(f *testing.F) {
	kb, _, _ := nextBatch(kafkaBatch(f, codecNone, mixedRecords(), 1, 0, 0))
	c := getConverter(new(Metrics))
	batch, _ := c.toIggy(&kb, &idGen{}, 1<<20)
	f.Add(append([]byte(nil), batch...), int64(0))
	putConverter(c)
	// A transaction's batch and its markers, as the store holds them.
	f.Add(append(storedTxnBatch(f, 7, 1, 0, "a", "b"), storedMarker(f, 7, 1, 2, true)...), int64(0))
	f.Add(storedMarker(f, 7, 1, 2, false), int64(2))
	// A poll from inside a transaction's batch: the slice keeps the batch's base offset.
	slice, _ := message.AppendSlice(nil, storedTxnBatch(f, 7, 1, 10, "a", "b", "c"), 11, 5)
	f.Add(slice, int64(11))
	f.Fuzz(func(t *testing.T, in []byte, from int64) {
		c := getConverter(new(Metrics))
		defer putConverter(c)
		if kept := leaveLastBatch(in); len(kept) > len(in) || !bytes.Equal(kept, in[:len(kept)]) {
			t.Fatalf("leaveLastBatch kept %d bytes that are not a prefix of %d", len(kept), len(in))
		}
		if rec, _, ok := splitRecord(in); ok {
			if fr, ok := firstFrame(rec); ok {
				var meta recMeta
				headTxn(&meta, &fr)
			}
			// As a fetch that read the batch's first message for a slice of it.
			c.head, c.headAt = batchTxn{txn: txnData, pid: 7, epoch: 1}, batchBase(rec)
		}
		recs := in
		for len(recs) > 0 {
			rec, rest, ok := splitRecord(recs)
			if !ok {
				return
			}
			recs = rest
			out, n, _, err := c.appendKafka(nil, rec, from)
			if err == nil && n > 0 {
				if _, _, err := nextBatch(out); err != nil {
					t.Fatalf("converted batch does not decode: %v", err)
				}
			}
			c.appendLegacy(nil, rec, from, 1)
		}
		ix := txnIndex{open: map[int64]int64{}}
		_ = ix.add(in)
	})
}
