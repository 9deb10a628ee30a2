//go:build !cgo

package fleettest

import (
	"os"
	"testing"
)

// rdkafkaFamilies needs librdkafka, which confluent-kafka-go links through cgo: without cgo
// there is none, and the test fails when the test command asks for cgo.
func rdkafkaFamilies(t *testing.T) []groupFamily {
	if os.Getenv(requireCgoEnv) != "" {
		t.Fatalf("built without cgo while %s is set: librdkafka's groups are left out", requireCgoEnv)
	}
	t.Log("built without cgo: librdkafka's groups are left out (CGO_ENABLED=1 and a C compiler are needed)")
	return nil
}
