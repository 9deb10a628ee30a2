package workload

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPools(t *testing.T) {
	for _, size := range []int{100, 1024} {
		r, err := NewPool(Random, size, 2<<20, 1)
		if err != nil {
			t.Fatal(err)
		}
		j, err := NewPool(JSON, size, 2<<20, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if len(r.Value(i)) != size || len(j.Value(i)) != size {
				t.Fatalf("size %d: value %d is %d and %d bytes", size, i, len(r.Value(i)), len(j.Value(i)))
			}
		}
		if bytes.Equal(j.Value(0), j.Value(1)) || bytes.Equal(r.Value(0), r.Value(1)) {
			t.Fatalf("size %d: consecutive values are equal", size)
		}
		rr, jr := r.SnappyRatio(1<<20), j.SnappyRatio(1<<20)
		t.Logf("size %d: snappy ratio random %.2f, json %.2f; %q", size, rr, jr, j.Value(7))
		if rr > 1.01 {
			t.Errorf("size %d: random values compress %.2f:1", size, rr)
		}
		if jr < 2.2 || jr > 4.5 {
			t.Errorf("size %d: json values compress %.2f:1, want about 3:1", size, jr)
		}
	}
}

// TestPercentiles: p50 and p99 are read from the sorted durations at len/2
// and len*99/100, whatever order they come in.
func TestPercentiles(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var lat []time.Duration
	for i := range 200 {
		lat = append(lat, ms(200-i)) // 200 ms down to 1 ms
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(lat), func(i, j int) { lat[i], lat[j] = lat[j], lat[i] })
	if p50, p99 := Percentiles(lat); p50 != 0.101 || p99 != 0.199 {
		t.Errorf("200 durations of 1 to 200 ms: p50 %v s, p99 %v s, want 0.101 and 0.199", p50, p99)
	}
	// Under a hundred, p99 is the largest.
	if p50, p99 := Percentiles([]time.Duration{ms(9), ms(1), ms(5), ms(3), ms(7)}); p50 != 0.005 || p99 != 0.009 {
		t.Errorf("9 1 5 3 7 ms: p50 %v s, p99 %v s, want 0.005 and 0.009", p50, p99)
	}
	if p50, p99 := Percentiles(nil); p50 != 0 || p99 != 0 {
		t.Errorf("no durations: p50 %v, p99 %v", p50, p99)
	}
}
