package main

import (
	"strings"
	"testing"
)

// A heartbeat interval short enough that Iggy would evict a gateway reading its lease on time
// is refused before anything starts, with the arithmetic that rules it out.
func TestServeRefusesAHeartbeatThatEvictsLiveGateways(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
	}{
		{args: []string{"serve", "--heartbeat-interval", "200ms", "--data", t.TempDir()}},
		{args: []string{"serve", "--iggy", "127.0.0.1:1", "--data", t.TempDir()}, env: []string{"IGGY_KAFKA_HEARTBEAT_INTERVAL=250ms"}},
	} {
		code, _, stderr := runCLI(t, tc.env, tc.args...)
		if code != exitUsage {
			t.Fatalf("%v %v: exit %d, want %d; stderr %q", tc.env, tc.args, code, exitUsage, stderr)
		}
		for _, want := range []string{"heartbeat-interval", "evict a live gateway", "1.2 x", "= 300ms", "above 250ms"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v %v: stderr %q lacks %q", tc.env, tc.args, stderr, want)
			}
		}
	}
}

func TestServeDrainTimeoutAndCoordinatorLogSettings(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "serve", "--drain-timeout", "0s", "--data", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "drain-timeout") {
		t.Fatalf("--drain-timeout 0s: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := runCLI(t, []string{"IGGY_KAFKA_COORDINATOR_LOG=false"}, "serve", "--print-config")
	if code != 0 {
		t.Fatalf("print-config: exit %d, stderr %q", code, stderr)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "coordinator-log") {
			line = l
		}
	}
	if !strings.Contains(line, "false") || !strings.Contains(line, "IGGY_KAFKA_COORDINATOR_LOG") {
		t.Fatalf("print-config shows coordinator-log as %q", line)
	}
}

// --transaction-version takes 1 or 2 only (the transaction.version a gateway finalizes).
func TestServeTransactionVersionSetting(t *testing.T) {
	for _, v := range []string{"0", "3"} {
		code, _, stderr := runCLI(t, nil, "serve", "--transactions", "--transaction-version", v, "--data", t.TempDir())
		if code != exitUsage || !strings.Contains(stderr, "transaction-version") {
			t.Fatalf("--transaction-version %s: exit %d, stderr %q", v, code, stderr)
		}
	}
}
