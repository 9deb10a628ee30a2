// Package workload is what every benchmark client shares, so that the Kafka
// clients and the native Iggy clients move the same bytes and are measured
// the same way: the payload pools, the CPU meters and the report a client
// prints for the runner.
//
// Two types matter. A Pool holds the values a client sends, random
// (incompressible) or a compressible corpus of JSON-like records, generated
// from a seed so that every client of a case sends identical bytes. A Window
// times one phase (produce or consume) and charges it the CPU of the client's
// own process and of the broker's, read at the same instants.
package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/s2"
)

// Payload kinds.
const (
	Random = "random" // uniformly random bytes: snappy cannot shrink them
	JSON   = "json"   // JSON-like event records that snappy shrinks about 3:1
)

// Pool is a sequence of values of one size. Value(i) walks the pool in
// order, so that records sent close together (one batch) never repeat a
// value or share bytes: a compressor finds no help in the pool itself, only
// in the values' content.
type Pool struct {
	Kind string
	Size int
	vals [][]byte
}

// DefaultPoolBytes is far above a batch (1 MiB by default in franz-go), so a
// batch never holds the same value twice.
const DefaultPoolBytes = 16 << 20

// NewPool makes about poolBytes of values of size bytes, deterministically
// from seed.
func NewPool(kind string, size, poolBytes int, seed uint64) (*Pool, error) {
	if size < 16 {
		return nil, fmt.Errorf("workload: value size %d is below 16 bytes", size)
	}
	n := max(poolBytes/size, 64)
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	p := &Pool{Kind: kind, Size: size, vals: make([][]byte, n)}
	arena := make([]byte, n*size)
	switch kind {
	case Random:
		for i := 0; i+8 <= len(arena); i += 8 {
			v := rng.Uint64()
			for j := range 8 {
				arena[i+j] = byte(v >> (8 * j))
			}
		}
		for i := range p.vals {
			p.vals[i] = arena[i*size : (i+1)*size : (i+1)*size]
		}
	case JSON:
		for i := range p.vals {
			p.vals[i] = appendRecord(arena[i*size:i*size:(i+1)*size], rng, size, i)
		}
	default:
		return nil, fmt.Errorf("workload: unknown payload kind %q (want %s or %s)", kind, Random, JSON)
	}
	return p, nil
}

// Len is the number of distinct values.
func (p *Pool) Len() int { return len(p.vals) }

// Value is the i-th value of the endless walk through the pool. Callers
// must not change it.
func (p *Pool) Value(i int) []byte { return p.vals[i%len(p.vals)] }

// SnappyRatio is raw bytes over snappy-compressed bytes when the pool is cut
// into chunks of chunk bytes and each chunk is compressed alone, the way a
// producer compresses one batch of consecutive values.
func (p *Pool) SnappyRatio(chunk int) float64 {
	var raw, packed int
	buf := make([]byte, 0, chunk+p.Size)
	var dst []byte
	flush := func() {
		dst = s2.EncodeSnappy(dst[:cap(dst)], buf)
		raw += len(buf)
		packed += len(dst)
		buf = buf[:0]
	}
	for _, v := range p.vals {
		buf = append(buf, v...)
		if len(buf) >= chunk {
			flush()
		}
	}
	if len(buf) > 0 {
		flush()
	}
	if packed == 0 {
		return 0
	}
	return float64(raw) / float64(packed)
}

var (
	events    = []string{"page_view", "add_to_cart", "checkout", "search", "login", "logout", "purchase", "refund", "rating", "share"}
	countries = []string{"DE", "US", "FR", "GB", "PL", "NL", "SE", "ES", "IT", "BR", "IN", "JP", "CA", "AU"}
	devices   = []string{"ios", "android", "web", "desktop", "tv"}
	browsers  = []string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
		"okhttp/4.12.0",
	}
	words = strings.Fields(`order item cart price blue red green large small shipped pending
		delivered express standard gift coupon summer winter sale new returning premium basic
		north south east west warehouse store online mobile review stars quick slow`)
	categories = []string{"shoes", "books", "garden", "toys", "kitchen", "phones", "music", "sports"}
)

const hexDigits = "0123456789abcdef"

// appendRecord appends one JSON-like event of exactly size bytes: fixed
// field names, values drawn from small vocabularies, numbers and ids that
// vary per record, and a free-text note that pads the record to its size.
func appendRecord(dst []byte, rng *rand.Rand, size, seq int) []byte {
	b := dst
	if size < 200 {
		// A short event keeps its fields to what fits in about 100 bytes.
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		b = append(b, `,"ev":"`...)
		b = append(b, events[rng.IntN(len(events))]...)
		b = append(b, `","u":"u`...)
		b = strconv.AppendInt(b, int64(rng.IntN(1_000_000)), 10)
		b = append(b, `","c":"`...)
		b = append(b, countries[rng.IntN(len(countries))]...)
		b = append(b, `","amt":`...)
		b = strconv.AppendFloat(b, float64(rng.IntN(100_000))/100, 'f', 2, 64)
	} else {
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		b = append(b, `,"ts":`...)
		b = strconv.AppendInt(b, 1767225600000+int64(seq)*7+int64(rng.IntN(7)), 10)
		b = append(b, `,"event":"`...)
		b = append(b, events[rng.IntN(len(events))]...)
		b = append(b, `","user":"u`...)
		b = strconv.AppendInt(b, int64(rng.IntN(1_000_000)), 10)
		b = append(b, `","session":"`...)
		for range 12 {
			b = append(b, hexDigits[rng.IntN(16)])
		}
		b = append(b, `","country":"`...)
		b = append(b, countries[rng.IntN(len(countries))]...)
		b = append(b, `","amount":`...)
		b = strconv.AppendFloat(b, float64(rng.IntN(100_000))/100, 'f', 2, 64)
		b = append(b, `,"device":"`...)
		b = append(b, devices[rng.IntN(len(devices))]...)
		b = append(b, `","path":"/`...)
		b = append(b, categories[rng.IntN(len(categories))]...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(rng.IntN(100_000)), 10)
		b = append(b, `","ua":"`...)
		b = append(b, browsers[rng.IntN(len(browsers))]...)
		b = append(b, `","items":[`...)
		for k := range 1 + rng.IntN(4) {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"sku":"`...)
			for range 8 {
				b = append(b, hexDigits[rng.IntN(16)])
			}
			b = append(b, `","qty":`...)
			b = strconv.AppendInt(b, int64(1+rng.IntN(9)), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"note":"`...)
	for len(b)-len(dst) < size-2 {
		if rng.IntN(hexOneIn) == 0 {
			for range 4 {
				b = append(b, hexDigits[rng.IntN(16)])
			}
		} else {
			b = append(b, words[rng.IntN(len(words))]...)
		}
		b = append(b, ' ')
	}
	b = b[:len(dst)+size-2]
	return append(b, '"', '}')
}

// hexOneIn is how often a note word is a random code instead of a
// vocabulary word; it sets how well the notes compress.
const hexOneIn = 20

// SelfCPU is the user plus system CPU time of this process so far, all
// threads, at microsecond resolution.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcCPU is the CPU time another process has used so far. It sums the
// nanosecond run times of the process's threads (/proc/PID/task/*/schedstat),
// since /proc/PID/stat counts in 10 ms ticks, too coarse for short phases;
// it falls back to /proc/PID/stat where schedstat is missing.
func ProcCPU(pid int) (time.Duration, error) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited between the glob and the read
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		sum += time.Duration(ns)
		n++
	}
	if n > 0 {
		return sum, nil
	}
	return statCPU(pid)
}

// statCPU reads utime and stime (fields 14 and 15) of /proc/PID/stat.
func statCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, may hold spaces; the fields after it are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("workload: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("workload: /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("workload: /proc/%d/stat: bad utime or stime", pid)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(ut+st) * tick, nil
}

// Phase is one timed part of a case, as a client reports it.
type Phase struct {
	Name    string  `json:"name"` // "produce" or "consume"
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"` // payload bytes (values only)
	Seconds float64 `json:"seconds"`
	// ClientCPU and BrokerCPU are CPU seconds spent in the window by the
	// client's process and by the broker's.
	ClientCPU float64 `json:"client_cpu"`
	BrokerCPU float64 `json:"broker_cpu"`
	// P50 and P99 are, in seconds, the send-to-ack latencies of a paced
	// phase (Latency) or the commit latencies of TxnProduce; zero in the
	// others.
	P50 float64 `json:"p50,omitempty"`
	P99 float64 `json:"p99,omitempty"`
}

// Latency names the paced produce phase.
const Latency = "latency"

// LatencyPhase closes a paced window and adds the percentiles of lat, the
// latencies of its records; it sorts lat.
func (w *Window) LatencyPhase(lat []time.Duration, size int) (Phase, error) {
	return w.TimedPhase(Latency, int64(len(lat)), int64(len(lat))*int64(size), lat)
}

// TimedPhase closes a window over records values of bytes payload bytes,
// with the P50 and P99 of lat, the durations of the operations it timed
// one by one; it sorts lat.
func (w *Window) TimedPhase(name string, records, bytes int64, lat []time.Duration) (Phase, error) {
	ph, err := w.End(name, records, bytes)
	if err != nil || len(lat) == 0 {
		return ph, err
	}
	ph.P50, ph.P99 = Percentiles(lat)
	return ph, nil
}

// Percentiles are the p50 and p99 of lat in seconds: the values at
// len/2 and len*99/100 of lat sorted (the largest for a hundred or fewer);
// it sorts lat. Zero for none.
func Percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2].Seconds(), lat[min(len(lat)-1, len(lat)*99/100)].Seconds()
}

// Report is what a client prints, as one JSON line, on standard output.
type Report struct {
	Client string  `json:"client"`
	Phases []Phase `json:"phases"`
}

// Write prints the report as one JSON line.
func (r Report) Write(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Window times one phase.
type Window struct {
	brokerPID    int
	start        time.Time
	self, broker time.Duration
}

// Begin starts a window; brokerPID is the broker's process (0: none known,
// its CPU is then reported as zero).
func Begin(brokerPID int) (*Window, error) {
	w := &Window{brokerPID: brokerPID}
	if brokerPID > 0 {
		var err error
		if w.broker, err = ProcCPU(brokerPID); err != nil {
			return nil, fmt.Errorf("workload: broker CPU: %w", err)
		}
	}
	w.self = SelfCPU()
	w.start = time.Now()
	return w, nil
}

// End closes the window over records values of bytes payload bytes in all.
func (w *Window) End(name string, records, bytes int64) (Phase, error) {
	el := time.Since(w.start)
	self := SelfCPU() - w.self
	var broker time.Duration
	if w.brokerPID > 0 {
		now, err := ProcCPU(w.brokerPID)
		if err != nil {
			return Phase{}, fmt.Errorf("workload: broker CPU: %w", err)
		}
		broker = now - w.broker
	}
	return Phase{Name: name, Records: records, Bytes: bytes, Seconds: el.Seconds(),
		ClientCPU: self.Seconds(), BrokerCPU: broker.Seconds()}, nil
}
