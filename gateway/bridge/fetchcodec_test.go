package bridge

import (
	"context"
	"slices"
	"testing"
)

// TestFetchCodec produces batches with three codecs and fetches them under each FetchCodec
// setting: "producer" gives every batch back with its own codec (and a slice starting mid-batch
// uncompressed), any other value gives every batch that codec, and the records never change.
func TestFetchCodec(t *testing.T) {
	recs := [][]trec{valueRecs("a", 3), mixedRecords(), valueRecs("c", 4)}
	produced := []int{codecSnappy, codecGzip, codecNone}
	var want []trec
	for _, r := range recs {
		want = append(want, r...)
	}
	for _, tc := range []struct {
		setting      string
		whole, slice []int // codecs fetched from offset 0, and from offset 1
	}{
		{"", produced, []int{codecNone, codecGzip, codecNone}},
		{"producer", produced, []int{codecNone, codecGzip, codecNone}},
		{"none", []int{codecNone, codecNone, codecNone}, []int{codecNone, codecNone, codecNone}},
		{"lz4", []int{codecLZ4, codecLZ4, codecLZ4}, []int{codecLZ4, codecLZ4, codecLZ4}},
		{"zstd", []int{codecZstd, codecZstd, codecZstd}, []int{codecZstd, codecZstd, codecZstd}},
		{"snappy", []int{codecSnappy, codecSnappy, codecSnappy}, []int{codecSnappy, codecSnappy, codecSnappy}},
		{"gzip", []int{codecGzip, codecGzip, codecGzip}, []int{codecGzip, codecGzip, codecGzip}},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			ctx := context.Background()
			m := newMemStore()
			b, err := newBridge(ctx, m, Config{AutoCreateTopics: true, FetchCodec: tc.setting})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := b.topicInfo(ctx, m, "t", true); err != nil {
				t.Fatal(err)
			}
			for i, r := range recs {
				if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, produced[i], r, -1, -1, -1)); err != nil {
					t.Fatal(err)
				}
			}
			for _, from := range []int64{0, 1} {
				res, err := b.fetch(ctx, m, "t", 0, from, 1<<20, 12)
				if err != nil {
					t.Fatal(err)
				}
				got, codecs := readBatchesCodecs(t, res.Records)
				res.Release()
				checkRecords(t, got, want[from:], from)
				wantCodecs := tc.whole
				if from == 1 {
					wantCodecs = tc.slice
				}
				if !slices.Equal(codecs, wantCodecs) {
					t.Errorf("from %d: codecs %v, want %v", from, codecs, wantCodecs)
				}
			}
		})
	}
}

func TestFetchCodecUnknown(t *testing.T) {
	if _, err := newBridge(context.Background(), newMemStore(), Config{FetchCodec: "brotli"}); err == nil {
		t.Fatal("an unknown fetch codec was accepted")
	}
	for _, name := range FetchCodecs {
		if _, err := parseFetchCodec(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
