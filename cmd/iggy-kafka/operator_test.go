package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// operatorStore is a store on loopback holding a coordinator log: every partition claimed by
// one of three nodes at a fixed time, and one commit per partition.
func operatorStore(t *testing.T) (addr string, put func(p int, r record.Record)) {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	log := testlog.Create(ctx, t, c, "kafka")
	put = func(p int, r record.Record) {
		t.Helper()
		log.Put(p, r)
	}
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for p := range record.Partitions {
		node := int32(1 + p%3)
		put(p, record.Record{Type: record.TypeClaim, Claim: 1, Time: base, ClaimInfo: &record.Claim{Number: 1, Node: node, Addr: "localhost:909" + string(rune('1'+p%3))}})
		put(p, record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: base.Add(time.Second), OffsetCommit: &record.OffsetCommit{Group: "g", Topic: "t", Partition: int32(p), Offset: 5, LeaderEpoch: -1}})
	}
	return srv.Addr, put
}

func TestOperatorCommandsEndToEnd(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	now = func() time.Time { return time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC) }
	t.Cleanup(func() { now = time.Now })

	code, out, stderr := runCLI(t, env, "inspect", "--verify")
	if code != exitOK || stderr != "" || out != "PARTITION  OFFSET  FINDING  DETAIL\n\n32 records, 0 findings\n" {
		t.Fatalf("clean verify: exit %d out %q stderr %q", code, out, stderr)
	}

	code, out, _ = runCLI(t, env, "claims")
	if code != exitOK {
		t.Fatalf("claims exit %d", code)
	}
	golden.Assert(t, "claims.text", []byte(out))

	code, out, _ = runCLI(t, env, "claims", "-o", "json")
	var doc struct {
		Version int           `json:"version"`
		Kind    string        `json:"kind"`
		Data    claims.Tables `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("claims -o json: exit %d %v\n%s", code, err, out)
	}
	if doc.Kind != "claims" || len(doc.Data.Partitions) != 16 {
		t.Fatalf("claims -o json: kind %q, %d rows", doc.Kind, len(doc.Data.Partitions))
	}
	for _, r := range doc.Data.Partitions {
		if r.OwnerNode == nil || *r.OwnerNode != int32(1+r.Partition%3) {
			t.Fatalf("row %+v", r)
		}
	}

	code, out, _ = runCLI(t, env, "inspect", "--partition", "2")
	if code != exitOK {
		t.Fatalf("inspect exit %d", code)
	}
	golden.Assert(t, "inspect.text", []byte(out))

	// A fenced writer's record: verify fails with exit 1, as JSON on stderr under -o json.
	put(2, record.Record{Type: record.TypeClaim, Claim: 2, Time: now(), ClaimInfo: &record.Claim{Number: 2, Node: 1, Addr: "localhost:9091"}})
	put(2, record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: now(), OffsetCommit: &record.OffsetCommit{Group: "g", Topic: "t", Partition: 2, Offset: 9, LeaderEpoch: -1}})
	code, out, stderr = runCLI(t, env, "inspect", "--verify", "-o", "json")
	if code != exitFailed {
		t.Fatalf("verify with a void record: exit %d out %s", code, out)
	}
	var findings struct {
		Data []verify.Finding `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil || len(findings.Data) != 1 || findings.Data[0].Kind != verify.FindingVoidFenced || findings.Data[0].Offset != 3 {
		t.Fatalf("findings %s: %v", out, err)
	}
	var e struct {
		Kind  string `json:"kind"`
		Error struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stderr), &e); err != nil || e.Kind != "error" || e.Error.ExitCode != 1 {
		t.Fatalf("stderr %q: %v", stderr, err)
	}

	code, out, _ = runCLI(t, env, "replay", "partition", "2")
	if code != exitOK {
		t.Fatalf("replay exit %d", code)
	}
	// The rate line is a measurement; everything else is fixed.
	golden.Assert(t, "replay.text", []byte(regexp.MustCompile(`replayed in .*`).ReplaceAllString(out, "replayed in <elapsed>")))

	code, out, _ = runCLI(t, env, "replay", "partition", "2", "-o", "yaml")
	if code != exitOK || !strings.Contains(out, "kind: replay") || !strings.Contains(out, "node: 1") || !strings.Contains(out, "offset: 5") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}

	for _, args := range [][]string{
		{"replay", "partition", "16"},
		{"replay", "node", "2"},
		{"inspect", "--partition", "99"},
		{"inspect", "--from", "yesterday"},
		{"claims", "--history", "-1"},
		{"inspect", "-o", "xml"},
	} {
		if code, _, stderr := runCLI(t, env, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
}

// claims --group fails, naming the address and the flag, when the store or the gateways cannot
// be reached (it once printed the dial error in a table cell and exited 0).
func TestClaimsGroupUnreachable(t *testing.T) {
	addr, _ := operatorStore(t)
	closed := freeport.Addr(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	code, out, stderr := runCLI(t, env, "claims", "--group", "g", "--kafka-bootstrap", closed, "--request-timeout", "1s")
	if code != exitFailed || out != "" || !strings.Contains(stderr, "asked:\n  "+closed+": unable to dial") || !strings.Contains(stderr, "--kafka-bootstrap (IGGY_KAFKA_KAFKA_BOOTSTRAP) sets the addresses") {
		t.Fatalf("gateways away: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	code, _, stderr = runCLI(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "claims", "--group", "g", "--iggy", closed, "--request-timeout", "1s")
	if code != exitFailed || !strings.Contains(stderr, "no answer from the store at "+closed) || !strings.Contains(stderr, "--iggy (IGGY_KAFKA_OPERATOR_IGGY) sets the address") {
		t.Fatalf("store away: exit %d stderr %s", code, stderr)
	}
	for _, args := range [][]string{
		{"claims", "--group", "g", "--history", "2"},
		{"claims", "--watch", "--group", "g"},
		{"claims", "--watch", "--history", "1"},
		{"claims", "--read-only"},
		{"claims", "extra"},
	} {
		if code, _, stderr := runCLI(t, env, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
}
