package bridge

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	gsnappy "github.com/golang/snappy"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// jsonRecords is the records section of a snappy batch of n of the benchmark runner's 1 KiB
// JSON-like values, uncompressed: what fetch compresses again when it rebuilds such a batch.
func jsonRecords(tb testing.TB, n int) []byte {
	kb, _, err := nextBatch(jsonBatch(tb, n, 1024))
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := decompress(nil, kb.codec(), kb.Records)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// TestCompressSnappyChunks checks the snappy stream fetch writes, with a decoder other than the
// encoder's: the xerial header, then chunks of at most xerialBlock bytes of input each, every one
// a raw snappy block, which together give the input back, compressed as the values allow.
func TestCompressSnappyChunks(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var src []byte
			if n > 0 {
				src = jsonRecords(t, n)
			}
			out, err := compress([]byte("hdr"), codecSnappy, src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, []byte("hdr")) {
				t.Fatalf("compress did not append: %q", out[:min(len(out), 8)])
			}
			out = out[3:]
			if len(out) < 16 || !bytes.Equal(out[:8], xerialMagic) || binary.BigEndian.Uint32(out[8:]) != 1 || binary.BigEndian.Uint32(out[12:]) != 1 {
				t.Fatalf("xerial header %x", out[:min(len(out), 16)])
			}
			var got []byte
			chunks := 0
			for rest := out[16:]; len(rest) > 0; chunks++ {
				if len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4 {
					t.Fatalf("chunk %d: length %x with %d bytes left", chunks, rest[:min(len(rest), 4)], len(rest))
				}
				size := binary.BigEndian.Uint32(rest)
				dec, err := snappy.Decode(nil, rest[4:4+size])
				if err != nil {
					t.Fatalf("chunk %d: %v", chunks, err)
				}
				if len(dec) == 0 || len(dec) > xerialBlock {
					t.Fatalf("chunk %d holds %d bytes of input, want 1 to %d", chunks, len(dec), xerialBlock)
				}
				got = append(got, dec...)
				rest = rest[4+size:]
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("decoded %d bytes, not the %d compressed", len(got), len(src))
			}
			if want := (len(src) + xerialBlock - 1) / xerialBlock; chunks != want {
				t.Fatalf("%d chunks for %d bytes, want %d", chunks, len(src), want)
			}
			// A run of the JSON-like values shrinks about 3:1 in snappy; literals would not.
			if len(src) >= xerialBlock && len(out)*2 > len(src) {
				t.Fatalf("%d bytes compressed to %d", len(src), len(out))
			}
		})
	}
}

// BenchmarkCompressSnappy compresses the records of one rebuilt batch of 1 KiB JSON-like values
// (about 1 MB, what franz-go sends by default) the way fetch does ("gateway"), and with the
// other snappy encoders and chunk sizes for comparison. cpu-MB/s is values per second of the
// process's CPU time, the figure to compare on a loaded machine; ratio is input over output.
func BenchmarkCompressSnappy(b *testing.B) {
	src := jsonRecords(b, (1<<20)/(1024+8))
	chunked := func(enc func(dst, src []byte) []byte, block int) func(dst, src []byte) []byte {
		return func(dst, src []byte) []byte {
			for len(src) > 0 {
				n := min(len(src), block)
				e := enc(dst[len(dst):cap(dst)], src[:n])
				dst = dst[:len(dst)+len(e)]
				src = src[n:]
			}
			return dst
		}
	}
	for _, c := range []struct {
		name string
		enc  func(dst, src []byte) []byte
	}{
		{"gateway", func(dst, src []byte) []byte { out, _ := compress(dst, codecSnappy, src); return out }},
		{"s2.EncodeSnappy/32KiB", chunked(s2.EncodeSnappy, 32<<10)},
		{"s2.EncodeSnappy/1MiB", chunked(s2.EncodeSnappy, 1<<20)},
		{"s2.EncodeSnappyBetter/32KiB", chunked(s2.EncodeSnappyBetter, 32<<10)},
		{"golang-snappy/32KiB", chunked(gsnappy.Encode, 32<<10)},
		{"golang-snappy/64KiB", chunked(gsnappy.Encode, 64<<10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(src))
			b.SetBytes(int64(len(src)))
			cpu := cpuTime()
			for b.Loop() {
				dst = c.enc(dst[:0], src)
			}
			b.ReportMetric(float64(b.N)*float64(len(src))/1e6/(cpuTime()-cpu).Seconds(), "cpu-MB/s")
			b.ReportMetric(float64(len(src))/float64(len(dst)), "ratio")
		})
	}
}
