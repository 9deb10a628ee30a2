//go:build !cgo

package fleettest

import (
	"os"
	"testing"
)

// requireCgoEnv, set (the test command sets it), makes a build without cgo fail
// TestLibrdkafkaStallAfterStop rather than skip it.
const requireCgoEnv = "IGGY_TEST_REQUIRE_CGO"

// TestLibrdkafkaStallAfterStop needs librdkafka, which confluent-kafka-go links through cgo;
// without cgo it skips, or fails under the test command, so the measurement is never lost unseen.
func TestLibrdkafkaStallAfterStop(t *testing.T) {
	if os.Getenv(requireCgoEnv) != "" {
		t.Fatalf("built without cgo while %s is set: librdkafka's stall is not measured (CGO_ENABLED=1 and a C compiler are needed)", requireCgoEnv)
	}
	t.Skip("librdkafka needs cgo: CGO_ENABLED=1 and a C compiler")
}
