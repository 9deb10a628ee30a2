package fleettest

import (
	"fmt"
	"os"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// iggyKafka is the iggy-kafka executable every process of every test runs, built once.
var iggyKafka string

func TestMain(m *testing.M) {
	bin, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleettest:", err)
		os.Exit(1)
	}
	iggyKafka = bin
	os.Exit(testbin.Main(m))
}
