package bridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// servedBatch is what a consumer reads of one fetched batch: where it starts, what it says of
// its producer and transaction, and its records.
type servedBatch struct {
	base          int64
	transactional bool
	control       bool
	pid           int64 // for transactional batches, whose producer a READ_COMMITTED reader needs
	epoch         int16
	records       []fetched
}

// readServed decodes fetched magic-2 batches of any kind (transactional and control ones
// included), checking their CRCs.
func readServed(t *testing.T, b []byte) []servedBatch {
	t.Helper()
	var out []servedBatch
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("decode fetched batch: %v", err)
		}
		end := 12 + int(rb.Length)
		if got := crc32.Checksum(b[21:end], crc32c); got != uint32(rb.CRC) {
			t.Fatalf("fetched batch CRC %08x, want %08x", uint32(rb.CRC), got)
		}
		sb := servedBatch{base: rb.FirstOffset, transactional: rb.Attributes&attrTransactional != 0, control: rb.Attributes&attrControl != 0}
		if sb.transactional {
			sb.pid, sb.epoch = rb.ProducerID, rb.ProducerEpoch
		}
		raw, err := decompress(nil, int(rb.Attributes&7), rb.Records)
		if err != nil {
			t.Fatalf("fetched batch does not decompress: %v", err)
		}
		for range rb.NumRecords {
			var kr kmsg.Record
			l, n := binary.Varint(raw)
			if n <= 0 || int(l) > len(raw)-n {
				t.Fatal("record length")
			}
			if err := kr.ReadFrom(raw[:n+int(l)]); err != nil {
				t.Fatalf("record: %v", err)
			}
			raw = raw[n+int(l):]
			sb.records = append(sb.records, fetched{Offset: rb.FirstOffset + int64(kr.OffsetDelta),
				trec: trec{Key: kr.Key, Value: kr.Value, Headers: kr.Headers, TS: rb.FirstTimestamp + kr.TimestampDelta64}})
		}
		out = append(out, sb)
		b = b[end:]
	}
	return out
}

// TestTailAnswersEqualRebuilt: what a consumer reads of the producers' own batches (the tail
// cache) equals what it reads of the same records rebuilt from Iggy, as a gateway restarted
// without the kept bytes serves them: the same batches at the same offsets, the same
// transactional and control flags and transactional producers, the same records, for every
// codec, random and compressible values, plain, idempotent and transactional batches and a
// commit marker between them. The idempotent producer's fields of a non-transactional batch
// are the one difference: a rebuilt batch leaves them out, which consumers do not read.
func TestTailAnswersEqualRebuilt(t *testing.T) {
	ctx := context.Background()
	for _, codec := range []int{codecNone, codecGzip, codecSnappy, codecLZ4, codecZstd} {
		for _, kind := range []string{"random", "compressible"} {
			t.Run(fmt.Sprintf("codec%d/%s", codec, kind), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(codec), 7))
				recs := func(prefix string) []trec {
					out := append(valueRecs(prefix, 5), mixedRecords()...)
					for i := range out[:5] {
						v := make([]byte, 600)
						if kind == "random" {
							for j := range v {
								v[j] = byte(rng.Uint32())
							}
						} else {
							v = bytes.Repeat(out[i].Value, 600/len(out[i].Value))
						}
						out[i].Value = v
					}
					return out
				}
				m := newMemStore()
				b := tailBridge(t, m, 1<<20)
				var produced []trec
				produce := func(batch []byte, rs []trec) {
					t.Helper()
					if _, err := b.produce(ctx, m, "t", 0, batch); err != nil {
						t.Fatal(err)
					}
					produced = append(produced, rs...)
				}
				plain, idem, txn, last := recs("p"), recs("i"), recs("x"), recs("l")
				produce(kafkaBatch(t, codec, plain, -1, -1, -1), plain)
				produce(kafkaBatch(t, codec, idem, 7, 0, 0), idem)
				produce(withAttrs(kafkaBatch(t, codec, txn, 9, 1, 0), attrTransactional), txn)
				marker, err := markerBatch(message.MakeID(1<<40, 3), 1_700_000_000_000_000, 9, 1, true)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := m.send(ctx, defaultStream, "t", 0, marker); err != nil {
					t.Fatal(err)
				}
				produce(kafkaBatch(t, codec, last, 7, 0, int32(len(idem))), last)

				tails := b.metrics.TailFetches()
				verbatim := fetchOK(t, b, m, 0, 1<<20)
				defer verbatim.Release()
				if b.metrics.TailFetches() != tails+1 {
					t.Fatal("the fetch was not answered from the tail cache")
				}
				restarted := topicBridge(t, m, Config{TailCacheBytes: -1, FetchCacheBytes: -1})
				rebuilt := fetchOK(t, restarted, m, 0, 1<<20)
				defer rebuilt.Release()

				got, want := readServed(t, verbatim.Records), readServed(t, rebuilt.Records)
				if len(got) != len(want) || len(got) != 5 {
					t.Fatalf("%d batches from the tail, %d rebuilt; want 5 each", len(got), len(want))
				}
				var records []fetched
				for i := range got {
					g, w := got[i], want[i]
					if g.base != w.base || g.transactional != w.transactional || g.control != w.control || g.pid != w.pid || g.epoch != w.epoch {
						t.Errorf("batch %d: from the tail at %d (transactional %v, control %v, producer %d/%d), rebuilt at %d (%v, %v, %d/%d)",
							i, g.base, g.transactional, g.control, g.pid, g.epoch, w.base, w.transactional, w.control, w.pid, w.epoch)
					}
					if len(g.records) != len(w.records) {
						t.Fatalf("batch %d: %d records from the tail, %d rebuilt", i, len(g.records), len(w.records))
					}
					for j := range g.records {
						if !sameFetched(g.records[j], w.records[j]) {
							t.Errorf("batch %d record %d differs: from the tail offset %d, ts %d, key %q, %d value bytes; rebuilt offset %d, ts %d, key %q, %d value bytes",
								i, j, g.records[j].Offset, g.records[j].TS, g.records[j].Key, len(g.records[j].Value), w.records[j].Offset, w.records[j].TS, w.records[j].Key, len(w.records[j].Value))
						}
					}
					if !g.control {
						records = append(records, g.records...)
					}
				}
				if !got[2].transactional || got[2].pid != 9 || !got[3].control {
					t.Errorf("the transactional batch (transactional %v, producer %d) and its marker (control %v) were not served as such", got[2].transactional, got[2].pid, got[3].control)
				}
				offsets := append(append([]fetched(nil), records[:3*len(plain)]...), records[3*len(plain):]...)
				for i := range offsets {
					if i >= 3*len(plain) {
						offsets[i].Offset-- // the marker takes an offset of its own
					}
				}
				checkRecords(t, offsets, produced, 0)
			})
		}
	}
}

func sameFetched(a, b fetched) bool {
	if a.Offset != b.Offset || a.TS != b.TS || !sameBytes(a.Key, b.Key) || !sameBytes(a.Value, b.Value) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}
