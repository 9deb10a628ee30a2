package bridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// keptBridge is a bridge over m whose tail cache holds 16 KiB of producers' batches, a few
// dozen of the tests' batches at most, and that keeps 1 MiB of those the tail cache lets go: in
// a sixteenth of its fetch cache of 16 MiB, or on disk, in files of dir, when dir is set.
func keptBridge(t *testing.T, m *memStore, dir string) *Bridge {
	t.Helper()
	cfg := Config{TailCacheBytes: 16 << 10, FetchCacheBytes: 16 << 20}
	if dir != "" {
		cfg.KeptBatchesBytes, cfg.KeptBatchesDir = 1<<20, dir
	}
	b := topicBridge(t, m, cfg)
	if b.kept == nil || (b.kept.dir != "") != (dir != "") {
		t.Fatalf("no kept share (on disk: %v) in a fetch cache of 16 MiB", dir != "")
	}
	return b
}

// keptModes runs f for the kept share in memory (dir "") and on disk (a directory of its own).
func keptModes(t *testing.T, f func(t *testing.T, dir string)) {
	t.Run("memory", func(t *testing.T) { f(t, "") })
	t.Run("disk", func(t *testing.T) { f(t, t.TempDir()) })
}

// sentBatch is a batch a test produced: the bytes its producer sent and the offset Iggy gave it.
type sentBatch struct {
	base int64
	raw  []byte
}

// asServed is what a fetch hands out of a producer's batch as it came: its bytes with the base
// offset Iggy gave it and leader epoch 0 written in (the Kafka batch header's first field and
// its partition leader epoch), the rest untouched.
func (s sentBatch) asServed() []byte {
	out := bytes.Clone(s.raw)
	binary.BigEndian.PutUint64(out[0:], uint64(s.base))
	binary.BigEndian.PutUint32(out[12:], 0)
	return out
}

// keptWorkload produces n batches to t/0 through b in codec: plain, idempotent and (with txns)
// transactional ones in turn, every transactional one followed by a commit marker another
// writer appends (which no cache holds), values random or compressible. It returns the batches
// the producers sent.
func keptWorkload(t *testing.T, b *Bridge, m *memStore, codec int, kind string, n int, seed uint64, txns bool) []sentBatch {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, uint64(codec)))
	var sent []sentBatch
	var seq, txnSeq int32
	idem, txn := int64(7+10*seed), int64(9+10*seed) // producers of their own for each workload
	for i := range n {
		recs := valueRecs(fmt.Sprint("s", seed, "b", i), 4)
		for j := range recs {
			v := make([]byte, 300)
			if kind == "random" {
				for k := range v {
					v[k] = byte(rng.Uint32())
				}
			} else {
				v = bytes.Repeat(recs[j].Value, 300/len(recs[j].Value))
			}
			recs[j].Value = v
		}
		if i%7 == 3 {
			recs = append(recs, mixedRecords()...)
		}
		var batch []byte
		kinds := 2
		if txns {
			kinds = 3
		}
		switch i % kinds {
		case 0:
			batch = kafkaBatch(t, codec, recs, -1, -1, -1)
		case 1:
			batch = kafkaBatch(t, codec, recs, idem, 0, seq)
			seq += int32(len(recs))
		default:
			batch = withAttrs(kafkaBatch(t, codec, recs, txn, 1, txnSeq), attrTransactional)
			txnSeq += int32(len(recs))
		}
		res, err := b.produce(ctx, m, "t", 0, batch)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, sentBatch{base: res.BaseOffset, raw: batch})
		if i%kinds == 2 {
			marker, err := markerBatch(message.MakeID(1<<40+uint64(seed)<<20+uint64(i), 3), 1_700_000_000_000_000, txn, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.send(ctx, defaultStream, "t", 0, marker); err != nil {
				t.Fatal(err)
			}
		}
	}
	return sent
}

// readAll reads t/0 through b from offset from to the high watermark, maxBytes a fetch, and
// returns the batches served, without the records below each fetch's offset (a fetch answers
// the whole batch holding its offset, and a batch a poll of Iggy cut short is answered whole by
// the next fetch; a consumer skips what it did not ask for).
func readAll(t *testing.T, b *Bridge, m *memStore, from int64, maxBytes int32) []servedBatch {
	t.Helper()
	var out []servedBatch
	for off := from; ; {
		res := fetchOK(t, b, m, off, maxBytes)
		got := readServed(t, res.Records)
		hw := res.HighWatermark
		res.Release()
		if len(got) == 0 {
			t.Fatalf("nothing served at %d (high watermark %d)", off, hw)
		}
		for _, g := range got {
			for len(g.records) > 0 && g.records[0].Offset < off {
				g.records = g.records[1:]
			}
			if len(g.records) > 0 {
				out = append(out, g)
				off = g.records[len(g.records)-1].Offset + 1
			}
		}
		if off >= hw {
			return out
		}
	}
}

// servedRecord is a record as a consumer reads it, with what its batch says of it.
type servedRecord struct {
	fetched
	transactional, control bool
	pid                    int64
	epoch                  int16
}

func servedRecords(bs []servedBatch) []servedRecord {
	var out []servedRecord
	for _, b := range bs {
		for _, r := range b.records {
			out = append(out, servedRecord{r, b.transactional, b.control, b.pid, b.epoch})
		}
	}
	return out
}

// sameServed fails t where got differs from want in what a consumer reads: the records, and
// the transactional and control flags and transactional producers of their batches.
func sameServed(t *testing.T, what string, got, want []servedBatch) {
	t.Helper()
	g, w := servedRecords(got), servedRecords(want)
	if len(g) != len(w) {
		t.Fatalf("%s: %d records, want %d", what, len(g), len(w))
	}
	for i := range g {
		a, b := g[i], w[i]
		if !sameFetched(a.fetched, b.fetched) || a.transactional != b.transactional || a.control != b.control || a.pid != b.pid || a.epoch != b.epoch {
			t.Fatalf("%s: record %d at offset %d (key %q, %d value bytes, transactional %v, control %v, producer %d/%d), want offset %d (%q, %d, %v, %v, %d/%d)",
				what, i, a.Offset, a.Key, len(a.Value), a.transactional, a.control, a.pid, a.epoch, b.Offset, b.Key, len(b.Value), b.transactional, b.control, b.pid, b.epoch)
		}
	}
}

// fromScratch is what a gateway without any cache serves of t/0 from offset 0: every batch
// rebuilt from what Iggy stored.
func fromScratch(t *testing.T, m *memStore) []servedBatch {
	t.Helper()
	return readAll(t, topicBridge(t, m, Config{TailCacheBytes: -1, FetchCacheBytes: -1}), m, 0, 1<<20)
}

// TestKeptAnswersEqualRebuilt: a reader behind the tail whose fetch starts at a producer's batch
// the tail cache let go gets that batch as its producer sent it (base offset written in) from
// the fetch cache's kept share, and whatever a reader reads behind the tail, from any offset and
// with any limit, equals what a gateway without caches rebuilds from Iggy: for every codec,
// random and compressible values, plain, idempotent and transactional batches and the markers
// between them.
func TestKeptAnswersEqualRebuilt(t *testing.T) { keptModes(t, testKeptAnswersEqualRebuilt) }

func testKeptAnswersEqualRebuilt(t *testing.T, dir string) {
	for _, codec := range []int{codecNone, codecGzip, codecSnappy, codecLZ4, codecZstd} {
		for _, kind := range []string{"random", "compressible"} {
			t.Run(fmt.Sprintf("codec%d/%s", codec, kind), func(t *testing.T) {
				m := newMemStore()
				b := keptBridge(t, m, dir)
				sent := keptWorkload(t, b, m, codec, kind, 120, 1, true)
				if b.metrics.KeptBytesStored() == 0 {
					t.Fatal("the tail cache let no batch go into the kept share")
				}
				want := fromScratch(t, m)
				kept := 0
				for i, s := range sent {
					keptBefore, tailBefore := b.metrics.KeptFetches(), b.metrics.TailFetches()
					res := fetchOK(t, b, m, s.base, 1)
					got := bytes.Clone(res.Records)
					res.Release()
					fromKept, fromTail := b.metrics.KeptFetches() > keptBefore, b.metrics.TailFetches() > tailBefore
					if i == 0 && !fromKept {
						t.Fatal("the first batch, long gone from the tail cache, was not answered from the kept share")
					}
					if fromKept || fromTail {
						if !bytes.Equal(got, s.asServed()) {
							t.Fatalf("batch %d at %d: %d bytes served from the producers' batches, not the %d its producer sent", i, s.base, len(got), len(s.raw))
						}
					}
					if fromKept {
						kept++
					}
					served := readServed(t, got)
					if len(served) != 1 {
						t.Fatalf("batch %d at %d: %d batches served with a limit of 1 byte, want 1", i, s.base, len(served))
					}
					j := 0
					for j < len(want) && want[j].base != s.base {
						j++
					}
					if j == len(want) {
						t.Fatalf("batch %d at %d not among those rebuilt", i, s.base)
					}
					sameServed(t, fmt.Sprintf("batch %d at %d", i, s.base), served, want[j:j+1])
				}
				if kept < 2 {
					t.Errorf("%d batches answered from the kept share", kept)
				}
				for _, maxBytes := range []int32{1, 3000, 1 << 20} {
					sameServed(t, fmt.Sprintf("read from 0 by %d bytes", maxBytes), readAll(t, b, m, 0, maxBytes), want)
				}
				pinsBalanced(t, b, "after the reads")
			})
		}
	}
}

// TestKeptAfterEviction: once the kept share has let a batch go too, a reader starting there
// gets it rebuilt from Iggy, then the batches still kept as their producers sent them, and
// reads what a gateway without caches serves.
func TestKeptAfterEviction(t *testing.T) { keptModes(t, testKeptAfterEviction) }

func testKeptAfterEviction(t *testing.T, dir string) {
	m := newMemStore()
	b := keptBridge(t, m, dir)
	// About 1.5 KiB a batch: 2,000 of them are three times what the kept share holds. No
	// transactional batches: the reference, a gateway without caches, polls Iggy by an estimated
	// count of messages and may start the next fetch inside a batch, and a transactional batch
	// read from inside is served without its flag, caches or not.
	sent := keptWorkload(t, b, m, codecNone, "random", 2000, 2, false)
	want := fromScratch(t, m)
	keptBefore := b.metrics.KeptFetches()
	res := fetchOK(t, b, m, sent[0].base, 1)
	res.Release()
	if b.metrics.KeptFetches() != keptBefore {
		t.Fatal("the first batch was answered from the kept share after three times its size went through it")
	}
	// The newest batches the tail let go are still kept.
	var keptAt int = -1
	for i := len(sent) - 1; i >= 0 && keptAt < 0; i-- {
		before := b.metrics.KeptFetches()
		res := fetchOK(t, b, m, sent[i].base, 1)
		if b.metrics.KeptFetches() > before {
			keptAt = i
			if !bytes.Equal(res.Records, sent[i].asServed()) {
				t.Errorf("kept batch %d served as %d bytes, not as its producer sent it", i, len(res.Records))
			}
		}
		res.Release()
	}
	if keptAt < len(sent)/2 {
		t.Fatalf("the newest kept batch is %d of %d", keptAt, len(sent))
	}
	sameServed(t, "read from 0", readAll(t, b, m, 0, 1<<20), want)
	pinsBalanced(t, b, "after the reads")
}

// TestKeptAfterRecreate: a topic another gateway deleted and re-created, and wrote other
// batches to at the same offsets, is read as it is now, not as the kept batches of the topic
// before: the check of the kept batch's first message finds another partition.
func TestKeptAfterRecreate(t *testing.T) { keptModes(t, testKeptAfterRecreate) }

func testKeptAfterRecreate(t *testing.T, dir string) {
	ctx := context.Background()
	m := newMemStore()
	b := keptBridge(t, m, dir)
	sent := keptWorkload(t, b, m, codecSnappy, "compressible", 120, 3, true)
	res := fetchOK(t, b, m, sent[0].base, 1)
	res.Release()
	if b.metrics.KeptFetches() == 0 {
		t.Fatal("the first batch was not answered from the kept share")
	}
	other := topicBridge(t, m, Config{TailCacheBytes: -1, FetchCacheBytes: -1})
	if err := other.deleteTopic(ctx, m, "t"); err != nil {
		t.Fatal(err)
	}
	if err := other.createTopic(ctx, m, "t", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	again := keptWorkload(t, other, m, codecSnappy, "compressible", 120, 4, true)
	if again[0].base != sent[0].base {
		t.Fatalf("the re-created topic's first batch is at %d, want %d", again[0].base, sent[0].base)
	}
	keptBefore := b.metrics.KeptFetches()
	sameServed(t, "the re-created topic from 0", readAll(t, b, m, 0, 1<<20), fromScratch(t, m))
	if b.metrics.KeptFetches() != keptBefore {
		t.Error("a batch of the topic before was answered from the kept share")
	}
	pinsBalanced(t, b, "after the reads")
}

// TestKeptAfterRestart: a restarted gateway keeps nothing of what its predecessor was sent; it
// rebuilds those batches, keeps its own producers' batches again, and a reader from the start
// reads what a gateway without caches serves.
func TestKeptAfterRestart(t *testing.T) { keptModes(t, testKeptAfterRestart) }

func testKeptAfterRestart(t *testing.T, dir string) {
	m := newMemStore()
	b := keptBridge(t, m, dir)
	keptWorkload(t, b, m, codecZstd, "compressible", 120, 5, true)
	b.Close()
	restarted := keptBridge(t, m, dir)
	sameServed(t, "the restarted gateway from 0", readAll(t, restarted, m, 0, 1<<20), fromScratch(t, m))
	if n := restarted.metrics.KeptFetches(); n != 0 {
		t.Fatalf("a restarted gateway answered %d reads from a kept share it was never given", n)
	}
	sent := keptWorkload(t, restarted, m, codecZstd, "compressible", 120, 6, true)
	res := fetchOK(t, restarted, m, sent[0].base, 1)
	if !bytes.Equal(res.Records, sent[0].asServed()) || restarted.metrics.KeptFetches() != 1 {
		t.Error("the restarted gateway's own first batch, gone from its tail cache, was not served from the kept share as sent")
	}
	res.Release()
	sameServed(t, "the restarted gateway from 0 after more batches", readAll(t, restarted, m, 0, 1<<20), fromScratch(t, m))
	pinsBalanced(t, restarted, "after the reads")
}
