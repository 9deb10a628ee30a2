package quota

import (
	"math"
	"time"
)

// rate is Kafka's Rate over a SampledStat: the sum of up to n samples of window each, over
// the time they cover (doc.go). Times are nanoseconds on the Manager's clock.
type rate struct {
	samples []sample
	current int
}

type sample struct {
	start int64 // when the sample's window began
	value float64
}

// record adds v at now, in the current sample or a new one once its window is over.
func (r *rate) record(v float64, now int64, window time.Duration, n int) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now})
		r.current = 0
	}
	if now-r.samples[r.current].start >= int64(window) {
		r.current = (r.current + 1) % n
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: now})
		} else {
			r.samples[r.current] = sample{start: now}
		}
	}
	r.samples[r.current].value += v
}

// measure is the rate per second at now and the time it is measured over.
func (r *rate) measure(now int64, window time.Duration, n int) (perSecond float64, over time.Duration) {
	total := 0.0
	oldest := now
	for i := range r.samples {
		s := &r.samples[i]
		if now-s.start >= int64(n)*int64(window) {
			*s = sample{start: now}
		}
		total += s.value
		oldest = min(oldest, s.start)
	}
	elapsed := time.Duration(now - oldest)
	if full := int(elapsed / window); full < n-1 {
		elapsed += time.Duration(n-1-full) * window
	}
	return total / elapsed.Seconds(), elapsed
}

// throttle is how long the rate at now stays over limit if nothing more is recorded, rounded
// up to the millisecond (Kafka rounds to the nearest: a client that waits out a throttle
// rounded down finds the rate still a hair over and is throttled again, a round trip lost);
// zero within the limit.
func (r *rate) throttle(limit float64, now int64, window time.Duration, n int) time.Duration {
	v, over := r.measure(now, window, n)
	if v <= limit {
		return 0
	}
	// (v-limit)/limit * over, written so that whole numbers stay whole in floating point.
	ms := v*over.Seconds()/limit*1000 - float64(over.Milliseconds())
	return time.Duration(math.Ceil(ms-1e-9)) * time.Millisecond
}
