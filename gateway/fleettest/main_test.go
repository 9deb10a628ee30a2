package fleettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// iggyKafka is the iggy-kafka executable every process of every test runs, built once.
var iggyKafka string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fleettest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleettest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	iggyKafka = filepath.Join(dir, "iggy-kafka")
	build := exec.Command("go", "build", "-o", iggyKafka, "github.com/iggy-kafka/iggy-kafka/cmd/iggy-kafka")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleettest: building iggy-kafka:", err)
		return 1
	}
	return m.Run()
}
