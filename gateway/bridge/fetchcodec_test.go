package bridge

import (
	"context"
	"slices"
	"testing"
)

// TestFetchCodec produces batches with three codecs and fetches them under each FetchCodec
// setting: "producer" gives every batch back with its own codec, any other value gives every
// batch that codec, and the records never change. A fetch from inside a batch gets the whole
// batch from a gateway that knows where it starts (its own tail), as Kafka answers; a gateway
// that does not (a second one over the same store) answers with the slice from the offset on,
// uncompressed under "producer", since the batch's codec rides on its first message.
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
			other, err := newBridge(ctx, m, Config{FetchCodec: tc.setting})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			for _, f := range []struct {
				name  string
				b     *Bridge
				from  int64
				first int64 // offset of the first record answered
				want  []int
			}{
				{"start", b, 0, 0, tc.whole},
				{"inside a known batch", b, 1, 0, tc.whole},
				{"inside an unknown batch", other, 1, 1, tc.slice},
			} {
				res, err := f.b.fetch(ctx, m, "t", 0, f.from, 1<<20, 12)
				if err != nil {
					t.Fatal(err)
				}
				got, codecs := readBatchesCodecs(t, res.Records)
				res.Release()
				checkRecords(t, got, want[f.first:], f.first)
				if !slices.Equal(codecs, f.want) {
					t.Errorf("%s: codecs %v, want %v", f.name, codecs, f.want)
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
