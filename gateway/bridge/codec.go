package bridge

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	gsnappy "github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
)

// fetchCodec is the codec fetched batches go out with. The zero value keeps
// the codec each batch was produced with.
type fetchCodec struct {
	set   bool
	codec int
}

// allows reports whether a batch produced with codec may be handed out as it is.
func (fc fetchCodec) allows(codec int) bool { return !fc.set || fc.codec == codec }

// fetchForm is how one topic's fetched batches go out: the codec, and whether they carry the
// time Iggy stored them (message.timestamp.type=LogAppendTime): the batch attributes' timestamp
// type bit set and the batch's max timestamp the Iggy batch's append time, which clients then
// give every record of the batch, as Kafka's brokers stamp such batches.
type fetchForm struct {
	fetchCodec
	logAppendTime bool
}

// allows reports whether a batch produced with codec may be handed out as its producer sent
// it: never with LogAppendTime, since the producer's batch carries its own times.
func (f fetchForm) allows(codec int) bool { return !f.logAppendTime && f.fetchCodec.allows(codec) }

// FetchCodecs are the values Config.FetchCodec takes.
var FetchCodecs = []string{"producer", "none", "gzip", "snappy", "lz4", "zstd"}

func parseFetchCodec(name string) (fetchCodec, error) {
	switch name {
	case "", "producer":
		return fetchCodec{}, nil
	case "none":
		return fetchCodec{true, codecNone}, nil
	case "gzip":
		return fetchCodec{true, codecGzip}, nil
	case "snappy":
		return fetchCodec{true, codecSnappy}, nil
	case "lz4":
		return fetchCodec{true, codecLZ4}, nil
	case "zstd":
		return fetchCodec{true, codecZstd}, nil
	}
	return fetchCodec{}, fmt.Errorf("bridge: fetch codec %q is none of %v", name, FetchCodecs)
}

// compressionTypes are the values of Kafka's compression.type topic config, each with the codec
// the topic's fetched batches go out with. Kafka recompresses a topic's batches into that codec
// as they are written and hands them back so; Iggy keeps records uncompressed, so the gateway
// compresses them as they are fetched. "producer" keeps each batch's own codec.
var compressionTypes = map[string]fetchCodec{
	"producer":     {},
	"uncompressed": {true, codecNone},
	"gzip":         {true, codecGzip},
	"snappy":       {true, codecSnappy},
	"lz4":          {true, codecLZ4},
	"zstd":         {true, codecZstd},
}

// compressionType is the compression.type value that stands for fc.
func compressionType(fc fetchCodec) string {
	for name, c := range compressionTypes {
		if c == fc {
			return name
		}
	}
	return "producer"
}

// Kafka compression codecs (the low three bits of the batch attributes).
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

// maxDecompressed bounds what one batch may inflate to. Nothing larger can
// become one Iggy batch anyway (a frame is at most 64 MiB), and the bound
// keeps a small compressed bomb from taking the gateway's memory.
const maxDecompressed = 64 << 20

// maxZstdWindow bounds the history a zstd frame may ask the decoder to keep: 8 MiB is what the
// format asks every decoder to support, and what Kafka clients' default levels stay within.
const maxZstdWindow = 8 << 20

// The decoders are pooled: creating a zstd or gzip decoder costs far more than
// decoding a typical batch.
var (
	gzipPool = sync.Pool{New: func() any { return new(gzip.Reader) }}
	lz4Pool  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdPool = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(false))
		if err != nil {
			panic(err) // only invalid options fail, and these are constant
		}
		return d
	}}
	bufPool = sync.Pool{New: func() any { return new(buffer) }}
)

// buffer is a pooled growable byte slice; it is a pointer type so Put does
// not allocate.
type buffer struct{ b []byte }

func getBuffer() *buffer { b := bufPool.Get().(*buffer); b.b = b.b[:0]; return b }

func putBuffer(b *buffer) {
	if cap(b.b) > 128<<20 {
		return
	}
	bufPool.Put(b)
}

// xerialMagic starts snappy data framed the way the Java client writes it.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// decompress appends the decoded form of src to dst.
func decompress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case codecNone:
		return append(dst, src...), nil
	case codecGzip:
		r := gzipPool.Get().(*gzip.Reader)
		defer gzipPool.Put(r)
		if err := r.Reset(bytes.NewReader(src)); err != nil {
			return dst, errCorrupt("gzip: %v", err)
		}
		return readAllBounded(dst, r, "gzip")
	case codecSnappy:
		if len(src) >= 16 && bytes.HasPrefix(src, xerialMagic) {
			return unxerial(dst, src[16:])
		}
		return unsnappy(dst, src)
	case codecLZ4:
		r := lz4Pool.Get().(*lz4.Reader)
		defer lz4Pool.Put(r)
		r.Reset(bytes.NewReader(src))
		return readAllBounded(dst, r, "lz4")
	case codecZstd:
		// Streamed, not DecodeAll: the bound then counts the bytes of every frame as they
		// are decoded instead of trusting each frame's declared content size.
		d := zstdPool.Get().(*zstd.Decoder)
		defer zstdPool.Put(d)
		if err := d.Reset(bytes.NewReader(src)); err != nil {
			return dst, errCorrupt("zstd: %v", err)
		}
		defer d.Reset(nil)
		return readAllBounded(dst, d, "zstd")
	default:
		return dst, errCorrupt("unknown compression codec %d", codec)
	}
}

// readAllBounded appends what r decodes to dst, reading at most one byte past the bound so that
// output beyond it is never produced, whatever the input declares about its size.
func readAllBounded(dst []byte, r io.Reader, name string) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst)-start > maxDecompressed {
			return dst, fmt.Errorf("%w: batch inflates beyond %d bytes", kerr.MessageTooLarge, maxDecompressed)
		}
		if cap(dst)-len(dst) < 32<<10 {
			// Doubling (append grows large slices by a quarter) keeps the bytes copied while
			// growing within twice the output.
			dst = slices.Grow(dst, min(max(64<<10, len(dst)-start), maxDecompressed+1-(len(dst)-start)))
		}
		room := min(cap(dst), start+maxDecompressed+1)
		n, err := r.Read(dst[len(dst):room])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, errCorrupt("%s: %v", name, err)
		}
	}
}

// snappyMaxRatio bounds what one byte of a snappy block can decode to: the densest element, a
// 3-byte copy, yields 64 bytes. A block that declares more than its size allows is corrupt, so
// its declared length is never allocated.
const snappyMaxRatio = 22

func unsnappy(dst, src []byte) ([]byte, error) {
	return unsnappyBounded(dst, src, maxDecompressed)
}

// unsnappyBounded decodes one raw snappy block whose output may take at most limit bytes.
func unsnappyBounded(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, errCorrupt("snappy: %v", err)
	}
	if n > limit {
		return dst, fmt.Errorf("%w: batch inflates beyond %d bytes", kerr.MessageTooLarge, maxDecompressed)
	}
	if n > snappyMaxRatio*len(src) {
		return dst, errCorrupt("snappy: block of %d bytes declares %d decoded", len(src), n)
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n] // every byte is written by Decode, no need to zero
	if _, err := snappy.Decode(dst[start:], src); err != nil {
		return dst[:start], errCorrupt("snappy: %v", err)
	}
	return dst, nil
}

// unxerial decodes the chunks after the 16-byte xerial header: each is a
// big-endian length and a raw snappy block.
func unxerial(dst, src []byte) ([]byte, error) {
	start := len(dst)
	for len(src) > 0 {
		if len(dst)-start > maxDecompressed {
			return dst, fmt.Errorf("%w: batch inflates beyond %d bytes", kerr.MessageTooLarge, maxDecompressed)
		}
		if len(src) < 4 {
			return dst, errCorrupt("snappy: truncated xerial chunk length")
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst, errCorrupt("snappy: xerial chunk of %d bytes with %d left", n, len(src))
		}
		var err error
		if dst, err = unsnappyBounded(dst, src[:n], maxDecompressed-(len(dst)-start)); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// Encoders for fetch, which hands a batch back compressed with the codec its
// producer used (Kafka clients size their decompression limits and buffer
// pools on that). They run at their fastest levels: the bytes only cross
// loopback or a LAN to the consumer, and fetch CPU is what bounds a gateway.
var (
	gzipWPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
	lz4WPool  = sync.Pool{New: func() any { return lz4.NewWriter(nil) }}
	zstdWPool = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			panic(err) // only invalid options fail, and these are constant
		}
		return e
	}}
)

// xerialBlock is the input of one chunk of the snappy stream fetch writes: 64 KiB, the block
// the golang/snappy encoder works in (the Java client writes 32 KiB; readers take any size).
// On the benchmark's JSON-like values golang/snappy in 64 KiB chunks compresses at about 1.3
// times the speed of s2.EncodeSnappy in 32 KiB chunks, per CPU second, and about 5% smaller
// (BenchmarkCompressSnappy); compression is most of a rebuild's cost for such values.
const xerialBlock = 64 << 10

// sliceWriter appends to a byte slice; a pointer so pooled writers can
// target it without allocating.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// compress appends src compressed with codec to dst. Snappy output uses the
// xerial framing, which every Kafka client reads.
func compress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case codecNone:
		return append(dst, src...), nil
	case codecGzip:
		w := gzipWPool.Get().(*gzip.Writer)
		defer gzipWPool.Put(w)
		return compressStream(dst, w, src)
	case codecSnappy:
		dst = append(dst, xerialMagic...)
		dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
		for len(src) > 0 {
			n := min(len(src), xerialBlock)
			lenAt := len(dst)
			dst = append(dst, 0, 0, 0, 0)
			dst = slices.Grow(dst, gsnappy.MaxEncodedLen(n))
			enc := gsnappy.Encode(dst[len(dst):cap(dst)], src[:n])
			binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(enc)))
			dst = dst[:len(dst)+len(enc)]
			src = src[n:]
		}
		return dst, nil
	case codecLZ4:
		w := lz4WPool.Get().(*lz4.Writer)
		defer lz4WPool.Put(w)
		return compressStream(dst, w, src)
	case codecZstd:
		e := zstdWPool.Get().(*zstd.Encoder)
		defer zstdWPool.Put(e)
		return e.EncodeAll(src, dst), nil
	default:
		return dst, fmt.Errorf("bridge: unknown compression codec %d", codec)
	}
}

// streamWriter is a reusable compressing writer (gzip, lz4).
type streamWriter interface {
	Reset(io.Writer)
	io.WriteCloser
}

// compressStream appends src compressed by w to dst.
func compressStream(dst []byte, w streamWriter, src []byte) ([]byte, error) {
	sw := &sliceWriter{b: dst}
	w.Reset(sw)
	if _, err := w.Write(src); err != nil {
		return dst, err
	}
	if err := w.Close(); err != nil {
		return dst, err
	}
	return sw.b, nil
}
