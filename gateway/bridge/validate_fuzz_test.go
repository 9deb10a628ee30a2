package bridge

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// FuzzCheckBatches feeds a partition's Records made of several batches, cut at an arbitrary
// point, to the check that runs before anything is stored: it either refuses the whole data or
// returns every batch of it, each a valid Iggy batch holding the batch's records. Kafka-side
// headers that pass validKafkaHeaders must read back as the same number of headers.
func FuzzCheckBatches(f *testing.F) {
	one := kafkaBatch(f, codecNone, mixedRecords(), -1, -1, -1)
	two := append(append([]byte(nil), one...), kafkaBatch(f, codecZstd, valueRecs("z", 3), -1, -1, -1)...)
	f.Add(two, uint32(len(two)))
	f.Add(two, uint32(len(one)+30))
	f.Add(append(append([]byte(nil), two...), kafkaBatch(f, codecSnappy, valueRecs("s", 2), 3, 0, 0)...), uint32(1<<31))
	f.Fuzz(func(t *testing.T, in []byte, cut uint32) {
		in = append([]byte(nil), in[:min(int(cut), len(in))]...)
		// Stamp correct CRCs on every batch that frames, so inputs get past the CRC check.
		for b := in; len(b) >= kbHeaderLen; {
			end := kbLengthStart + int(int32(binary.BigEndian.Uint32(b[8:])))
			if end < kbHeaderLen || end > len(b) {
				break
			}
			binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[kbCRCStart:end], crc32c))
			b = b[end:]
		}
		c := getConverter(new(Metrics))
		defer putConverter(c)
		checked, err := checkBatches(c, &idGen{}, in, 1<<20)
		if err != nil {
			return
		}
		framed := 0
		for b := in; len(b) > 0; framed++ {
			_, rest, err := nextBatch(b)
			if err != nil {
				t.Fatalf("accepted data whose batch %d does not frame: %v", framed, err)
			}
			b = rest
		}
		if framed != len(checked) {
			t.Fatalf("%d batches framed, %d checked", framed, len(checked))
		}
		for i, cb := range checked {
			if n, err := message.Validate(cb.batch); err != nil || n != uint32(cb.kb.NumRecords) {
				t.Fatalf("batch %d fails admission: %d records, %v", i, n, err)
			}
		}
	})
}

// FuzzKafkaHeaders checks the header-section validator against the record decoder that reads
// what a Kafka client reads: a section it accepts must decode inside a record.
func FuzzKafkaHeaders(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{2, 2, 'k', 2, 'v', 0, 1})
	f.Add(binary.AppendVarint(nil, 1<<30))
	f.Fuzz(func(t *testing.T, hdrs []byte) {
		if !validKafkaHeaders(hdrs) {
			return
		}
		rec := appendKafkaRecord(nil, 0, 0, nil, true, []byte("v"), false, hdrs)
		var kr krecord
		if _, err := nextRecord(rec, &kr); err != nil {
			t.Fatalf("valid header section % x does not decode in a record: %v", hdrs, err)
		}
	})
}
