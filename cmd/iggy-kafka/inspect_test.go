package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
)

// inspect --verify ends with its verdict in every format: the records it read and the findings,
// none on a clean log, one after a fenced owner writes on.
func TestInspectVerifyVerdict(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, f := range []string{"text", "json", "yaml"} {
		code, out, stderr := runCLI(t, env, "inspect", "--verify", "-o", f)
		if code != exitOK || stderr != "" {
			t.Fatalf("clean verify -o %s: exit %d stderr %q", f, code, stderr)
		}
		golden.Assert(t, "verify.clean."+f, []byte(out))
	}
	at := time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC)
	put(2, record.Record{Type: record.TypeClaim, Claim: 2, Time: at, ClaimInfo: &record.Claim{Number: 2, Node: 1, Addr: "localhost:9091"}})
	put(2, record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at, OffsetCommit: &record.OffsetCommit{Group: "g", Topic: "t", Partition: 2, Offset: 9, LeaderEpoch: -1}})
	for _, f := range []string{"text", "json", "yaml"} {
		code, out, stderr := runCLI(t, env, "inspect", "--verify", "-o", f)
		if code != exitFailed || !strings.Contains(stderr, "1 finding(s)") {
			t.Fatalf("verify -o %s with a void record: exit %d stderr %q", f, code, stderr)
		}
		golden.Assert(t, "verify.findings."+f, []byte(out))
	}
	// --group verifies the group's partition alone: another partition is clean.
	g := "g"
	for i := 0; record.Partition(g) == 2; i++ {
		g = "g" + strconv.Itoa(i)
	}
	code, out, _ := runCLI(t, env, "inspect", "--verify", "--group", g)
	if code != exitOK || !strings.HasSuffix(out, "\n2 records, 0 findings\n") {
		t.Fatalf("verify --group %s: exit %d\n%s", g, code, out)
	}
}
