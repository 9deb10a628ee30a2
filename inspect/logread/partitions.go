package logread

import (
	"fmt"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// AllPartitions lists the 16 log partitions.
func AllPartitions() []int {
	out := make([]int, record.Partitions)
	for i := range out {
		out[i] = i
	}
	return out
}

// CheckPartition refuses a partition number outside the log.
func CheckPartition(p int) error {
	if p < 0 || p >= record.Partitions {
		return fmt.Errorf("partition %d is not a coordinator log partition (0..%d)", p, record.Partitions-1)
	}
	return nil
}
