package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// announcement encodes a coordinator_owners message in the fleet's encoding.
func announcement(node int32, addr string, at time.Time, claims map[int]uint64) []byte {
	return fleet.EncodeAnnouncement(fleet.Announcement{Node: node, Addr: addr, Time: at, Claims: claims})
}

// drainRequest is node's latest drain request as the fleet model reads it.
func drainRequest(ctx context.Context, log *logread.Log, node int32) (fleet.DrainRequest, bool, error) {
	m, err := claims.LoadModel(ctx, log)
	if err != nil {
		return fleet.DrainRequest{}, false, err
	}
	r, ok := m.View.DrainRequest(node)
	return r, ok, nil
}

// A drain end to end against a store, with the test in the coordinator's place: it answers the
// drain request by claiming node 2's partitions on node 1 and announcing them.
func TestDrainEndToEnd(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := wire.NamedID(fleet.MetaStream("kafka"))
	owned := map[int32]map[int]uint64{1: {}, 2: {}, 3: {}}
	for p := range record.Partitions {
		owned[int32(1+p%3)][p] = 1
	}
	announce := func() {
		t.Helper()
		for node, claims := range owned {
			msg := iggy.Message{Payload: announcement(node, "localhost:909"+string(rune('0'+node)), time.Now(), claims)}
			if _, err := c.SendMessages(ctx, meta, wire.NamedID(fleet.OwnersTopic), 0, []iggy.Message{msg}); err != nil {
				t.Fatal(err)
			}
		}
	}
	announce()

	if code, _, stderr := runCLI(t, env, "drain", "node", "9", "--yes"); code != exitFailed || !strings.Contains(stderr, "node 9 is not a gateway of this fleet (known: 1, 2, 3)") {
		t.Fatalf("dead node: exit %d stderr %q", code, stderr)
	}
	code, out, _ := runCLI(t, env, "drain", "node", "2", "--dry-run", "-o", "json")
	var plan struct {
		Data []drainwatch.Step `json:"data"`
	}
	if code, _, stderr := runCLI(t, env, "drain", "node", "2", "--undo"); code != exitFailed || !strings.Contains(stderr, "node 2 is not drained: there is nothing to undo") {
		t.Fatalf("undo of a node never drained: exit %d stderr %q", code, stderr)
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != exitOK || len(plan.Data) != 5 || plan.Data[0].Partition != 1 || plan.Data[0].Groups[0] != "g" {
		t.Fatalf("dry run: exit %d %v\n%s", code, err, out)
	}
	if code, _, stderr := runCLI(t, env, "drain", "node", "2"); code != exitUsage || !strings.Contains(stderr, "--yes") {
		t.Fatalf("without --yes and no terminal: exit %d %q", code, stderr)
	}

	type result struct {
		code        int
		out, stderr string
	}
	res := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		code := run(ctx, []string{"drain", "node", "2", "--yes", "--wait", "--timeout", "30s"}, env, &o, &e)
		res <- result{code, o.String(), e.String()}
	}()
	log := logread.NewLog(c, "kafka", nil)
	checkfor.Eventually(t, 20*time.Second, "the drain request", func() error {
		r, ok, err := drainRequest(ctx, log, 2)
		if err != nil {
			return err
		}
		if !ok || r.Undo {
			return errors.New("no drain request for node 2 yet")
		}
		return nil
	})
	for p := range owned[2] {
		put(p, record.Record{Type: record.TypeClaim, Claim: 2, Time: time.Now(), ClaimInfo: &record.Claim{Number: 2, Node: 1, Addr: "localhost:9091"}})
		owned[1][p] = 2
	}
	owned[2] = map[int]uint64{}
	announce()
	var r result
	select {
	case r = <-res:
	case <-ctx.Done():
		t.Fatal("drain did not finish")
	}
	if r.code != exitOK || !strings.Contains(r.stderr, "node 2 drained") {
		t.Fatalf("drain: exit %d\nstdout %s\nstderr %s", r.code, r.out, r.stderr)
	}
	for _, want := range []string{"partition 1: released by node 2", "partition 1: claimed by node 1 (claim 2)", "partition 13: served by node 1 (claim 2)"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.out)
		}
	}

	code, out, _ = runCLI(t, env, "claims", "-o", "json")
	var claims struct {
		Data claims.Tables `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &claims); err != nil || code != exitOK {
		t.Fatalf("claims: %d %v", code, err)
	}
	for _, row := range claims.Data.Partitions {
		if *row.OwnerNode == 2 {
			t.Fatalf("node 2 still owns %+v", row)
		}
	}
	if code, _, stderr := runCLI(t, env, "drain", "node", "2", "--undo"); code != exitOK || !strings.Contains(stderr, "come back") {
		t.Fatalf("undo: exit %d %q", code, stderr)
	}
	if r, ok, err := drainRequest(ctx, log, 2); err != nil || !ok || !r.Undo {
		t.Fatalf("after undo: %+v %v", r, err)
	}

	// A drain someone undoes while it is followed fails instead of waiting for its timeout.
	announce()
	go func() {
		var o, e bytes.Buffer
		code := run(ctx, []string{"drain", "node", "3", "--yes", "--wait", "--timeout", "30s"}, env, &o, &e)
		res <- result{code, o.String(), e.String()}
	}()
	checkfor.Eventually(t, 20*time.Second, "the drain request of node 3", func() error {
		r, ok, err := drainRequest(ctx, log, 3)
		if err != nil {
			return err
		}
		if !ok || r.Undo {
			return errors.New("no drain request for node 3 yet")
		}
		return nil
	})
	if code, _, stderr := runCLI(t, env, "drain", "node", "3", "--undo"); code != exitOK {
		t.Fatalf("undo: exit %d %q", code, stderr)
	}
	select {
	case r = <-res:
	case <-ctx.Done():
		t.Fatal("undone drain did not finish")
	}
	if r.code != exitFailed || !strings.Contains(r.stderr, "undone meanwhile") {
		t.Fatalf("undone drain: exit %d stderr %s", r.code, r.stderr)
	}
}

// skewedDrainer writes each request, then at once the opposite request for the same node as a
// second operator whose clock is an hour behind would: an undo of the drain, or a drain again
// after the undo. The follower never sees the first request alone, and the second one's time is
// before the first's: only log order says it came later.
type skewedDrainer struct {
	drainplan.IggyDrainer
	c *iggy.Client
}

func (d skewedDrainer) RequestDrain(ctx context.Context, node int32, undo bool) (uint64, error) {
	off, err := d.IggyDrainer.RequestDrain(ctx, node, undo)
	if err != nil {
		return 0, err
	}
	b := fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node, Undo: !undo, Time: time.Now().Add(-time.Hour).UTC()})
	_, err = d.c.SendMessages(ctx, wire.NamedID(fleet.MetaStream("kafka")), wire.NamedID(fleet.DrainsTopic), 0, []iggy.Message{{Payload: b}})
	return off, err
}

// A drain undone by an operator whose clock is behind, and an undo followed by a drain again
// from such a clock, end `--wait` at once with what happened, not with a timeout: log order
// decides which request is the later one (drainwatch), as it does for the gateways.
func TestDrainWaitSkewedClock(t *testing.T) {
	addr, _ := operatorStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := wire.NamedID(fleet.MetaStream("kafka"))
	for node := int32(1); node <= 3; node++ {
		claims := map[int]uint64{}
		for p := range record.Partitions {
			if int32(1+p%3) == node {
				claims[p] = 1
			}
		}
		msg := iggy.Message{Payload: announcement(node, "localhost:909"+string(rune('0'+node)), time.Now(), claims)}
		if _, err := c.SendMessages(ctx, meta, wire.NamedID(fleet.OwnersTopic), 0, []iggy.Message{msg}); err != nil {
			t.Fatal(err)
		}
	}
	log := logread.NewLog(c, "kafka", nil)
	run := func(undo bool) error {
		var out, errw bytes.Buffer
		return runDrain(ctx, drainRun{log: log, drainer: skewedDrainer{drainplan.IggyDrainer{Log: log, Writer: c}, c}, nodes: []int32{2},
			f: output.Text, yes: true, wait: true, follow: true, undo: undo, timeout: 5 * time.Second, out: &out, errw: &errw})
	}
	start := time.Now()
	if err := run(false); err == nil || err.Error() != "the drain of node 2 was undone meanwhile" {
		t.Fatalf("drain undone from a clock behind: %v", err)
	}
	t.Logf("the undo seen after %v", time.Since(start))
	// The skewed undo of the drain above stands: drain node 2 for the undo to have something to do.
	if _, err := (drainplan.IggyDrainer{Log: log, Writer: c}).RequestDrain(ctx, 2, false); err != nil {
		t.Fatal(err)
	}
	if err := run(true); err == nil || err.Error() != "node 2 drained again meanwhile" {
		t.Fatalf("undo drained again from a clock behind: %v", err)
	}
}

// A drain refused because a node is already drained says, in the command's terms, how to undo
// that drain; other refusals and errors pass as they are.
func TestUndoHint(t *testing.T) {
	drained := &drainplan.Refused{Reason: "node 2 is already drained (since 2026-12-01T09:00:00Z)", Drained: []int32{2}}
	want := "node 2 is already drained (since 2026-12-01T09:00:00Z); undo it with 'iggy-kafka drain node 2 --undo'"
	if got := undoHint(drained); got.Error() != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var r *drainplan.Refused
	if !errors.As(undoHint(drained), &r) || len(r.Drained) != 1 {
		t.Errorf("the hinted error is no longer a refusal naming node 2")
	}
	other := &drainplan.Refused{Reason: "node 7 is not a gateway of this fleet (known: 1, 2, 3)"}
	if got := undoHint(other); got != error(other) {
		t.Errorf("a refusal of another kind changed: %v", got)
	}
}
