package bridge

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzUpconvert feeds arbitrary bytes as the Records of a Produce v0-2 partition: they are
// refused or become one magic-2 batch that decodes whole, never a panic.
func FuzzUpconvert(f *testing.F) {
	f.Add(legacyMessage(0, 0, 0, 0, []byte("k"), []byte("v")))
	f.Add(concat(legacyMessage(0, 1, 0, 7, nil, []byte("a")), legacyMessage(1, 1, 0, 3, []byte{}, nil)))
	f.Add(legacyWrapper(f, 1, 1, codecGzip, 9, concat(legacyMessage(0, 1, 0, 8, nil, []byte("x")), legacyMessage(1, 1, 0, 9, nil, []byte("y")))))
	f.Add(legacyWrapper(f, 0, 0, codecXerial, 0, legacyMessage(0, 0, 0, 0, nil, []byte("s"))))
	f.Fuzz(func(t *testing.T, in []byte) {
		// Random bytes almost never carry a valid CRC-32, which would keep the fuzzer at the
		// door; stamp the right one on the first message (the CRC check has its own tests).
		if len(in) >= legacyOverhead+legacyMinV0 {
			if end := legacyOverhead + int64(int32(binary.BigEndian.Uint32(in[8:]))); end >= legacyOverhead+legacyMinV0 && end <= int64(len(in)) {
				in = append([]byte(nil), in...)
				binary.BigEndian.PutUint32(in[12:], crc32.ChecksumIEEE(in[legacyCRCStart:end]))
			}
		}
		c := getConverter(new(Metrics))
		defer putConverter(c)
		out, err := c.upconvert(nil, in)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("refused set left %d bytes behind", len(out))
			}
			return
		}
		kb, rest, err := nextBatch(out)
		if err != nil || len(rest) != 0 {
			t.Fatalf("converted batch does not decode: %v, %d bytes after it", err, len(rest))
		}
		if kb.codec() != codecNone || kb.ProducerID != -1 || kb.NumRecords < 1 || kb.LastOffsetDelta != kb.NumRecords-1 {
			t.Fatalf("converted batch header %+v", kb)
		}
		recs, n := kb.Records, int32(0)
		for len(recs) > 0 {
			var r krecord
			if recs, err = nextRecord(recs, &r); err != nil {
				t.Fatalf("record %d: %v", n, err)
			}
			if r.OffsetDelta != n || r.NumHeaders != 0 {
				t.Fatalf("record %d: offset delta %d, %d headers", n, r.OffsetDelta, r.NumHeaders)
			}
			if ts := kb.FirstTimestamp + r.TimestampDelta; ts > kb.MaxTimestamp {
				t.Fatalf("record %d: timestamp %d above the batch's %d", n, ts, kb.MaxTimestamp)
			}
			n++
		}
		if n != kb.NumRecords {
			t.Fatalf("%d records, header says %d", n, kb.NumRecords)
		}
	})
}
