package workload

import (
	"bytes"
	"testing"
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
