package fleettest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// drained is the node the drain scenario drains.
const drained = 2

// TestDrainNode runs the operator's `iggy-kafka drain node 2 --yes --wait` against the fleet
// under load: every log partition of node 2 must be claimed and served elsewhere when it exits
// 0, node 2 must still answer Produce and Fetch and be listed in Metadata while it leads no
// partition, the consumer group must keep its generation without a rejoin answer (finish checks
// both, and every record), and after `--undo` node 2 must coordinate partitions again.
func TestDrainNode(t *testing.T) {
	r := startRun(t)
	before := r.pr.waitAllServed(t, 20*time.Second, "before the drain")
	var owned []int
	for p, id := range before {
		if id == drained {
			owned = append(owned, p)
		}
	}
	if len(owned) == 0 {
		t.Fatalf("node %d serves no log partition before the drain: %v", drained, before)
	}

	planned := r.plan(t, drained)
	at := time.Now()
	out, stderr := r.operator(t, "drain", "node", fmt.Sprint(drained), "--yes", "--wait", "--timeout", "30s", "-o", "json")
	took := time.Since(at)
	if !strings.Contains(stderr, fmt.Sprintf("node %d drained", drained)) {
		t.Errorf("drain exited 0 without saying so: %s", stderr)
	}
	checkServedEvents(t, out, owned)
	moved := r.handover(drained, at, before, 15*time.Second)
	t.Logf("drain of node %d (log partitions %v) exited 0 after %v; served elsewhere after %v", drained, owned, took, moved)

	after := r.pr.waitAllServed(t, 10*time.Second, "after the drain")
	for p, id := range after {
		if id == drained {
			t.Errorf("log partition %d still served by drained node %d", p, id)
		}
	}
	checkMovesPlanned(t, fmt.Sprint("drain of node ", drained), before, after, planned)
	groups := probeGroups()
	for _, p := range owned {
		if id := r.coordinator(groups[p]); id == drained {
			t.Errorf("FindCoordinator of %s (log partition %d) names drained node %d", groups[p], p, id)
		}
	}
	r.checkDrainedNode(t)
	r.waitProgress("the load after the drain")
	r.drainAllButOne(t, after)

	r.operator(t, "drain", "node", fmt.Sprint(drained), "--undo", "--yes", "--wait")
	checkfor.Eventually(t, 15*time.Second, fmt.Sprintf("node %d coordinating again after the undo", drained), func() error {
		rs := r.pr.snapshot()
		last := rs[len(rs)-1]
		for p := range LogPartitions {
			if len(last.heartbeat[p]) == 0 {
				return fmt.Errorf("log partition %d unserved: %s", p, describeRound(last))
			}
		}
		for p := range LogPartitions {
			if _, ok := last.heartbeat[p][drained]; ok {
				return nil
			}
		}
		return fmt.Errorf("node %d serves nothing: %s", drained, describeRound(last))
	})
	r.waitProgress("the load after the undo")
	r.killedNodeGone(t)
	r.finish()
}

// plan is `drain node N --dry-run -o json`: log partition -> destination node.
func (r *run) plan(t *testing.T, node int32) map[int]int32 {
	t.Helper()
	out, _ := r.operator(t, "drain", "node", fmt.Sprint(node), "--dry-run", "-o", "json")
	var doc struct {
		Data []struct {
			Partition  int    `json:"partition"`
			From       int32  `json:"from_node"`
			To         *int32 `json:"to_node"`
			Collateral bool   `json:"collateral"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("drain --dry-run -o json: %v\n%s", err, out)
	}
	plan := map[int]int32{}
	for _, s := range doc.Data {
		if s.To == nil {
			t.Fatalf("the plan of node %d gives partition %d no destination: %s", node, s.Partition, out)
		}
		plan[s.Partition] = *s.To
	}
	return plan
}

// checkMovesPlanned: the partitions whose coordinator changed from before to after are exactly
// the plan's, each at its planned destination; it logs how many moved.
func checkMovesPlanned(t *testing.T, what string, before, after [LogPartitions]int32, plan map[int]int32) {
	t.Helper()
	moved := map[int]int32{}
	for p := range LogPartitions {
		if before[p] != after[p] {
			moved[p] = after[p]
		}
	}
	if fmt.Sprint(moved) != fmt.Sprint(plan) {
		t.Errorf("%s moved %v (partition: new coordinator), the plan said %v", what, moved, plan)
	}
	t.Logf("%s: %d partitions moved, %d planned", what, len(moved), len(plan))
}

// drainAllButOne drains node 1 beside node 2, so node 3 alone serves: a drain of node 3 is then
// refused, dry-run included, and node 3 keeps all 16 partitions; the node table says so. Node 1
// comes back at the end.
func (r *run) drainAllButOne(t *testing.T, before [LogPartitions]int32) {
	t.Helper()
	planned := r.plan(t, 1)
	r.operator(t, "drain", "node", "1", "--yes", "--wait", "--timeout", "30s", "-o", "json")
	after := r.pr.waitAllServed(t, 10*time.Second, "after the drain of node 1")
	checkMovesPlanned(t, "drain of node 1", before, after, planned)
	for _, args := range [][]string{{"drain", "node", "3", "--dry-run"}, {"drain", "node", "3", "--yes"}} {
		code, stderr := r.operatorFails(t, args...)
		if code != 1 || !strings.Contains(stderr, "refusing to drain node 3: no gateway would be left serving the coordinator log (1 gateway serves now: node 3)") {
			t.Errorf("%s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
	for p, id := range r.pr.waitAllServed(t, 10*time.Second, "node 3 alone") {
		if id != 3 {
			t.Errorf("log partition %d served by node %d with nodes 1 and 2 drained", p, id)
		}
	}
	checkfor.Eventually(t, 10*time.Second, "the node table: 1 and 2 drained, 3 serving all 16", func() error {
		nodes, err := r.nodeTable(t)
		if err != nil {
			return err
		}
		got := fmt.Sprint(nodes)
		if got != "map[1:drained/0 2:drained/0 3:serving/16]" {
			return fmt.Errorf("nodes %s", got)
		}
		return nil
	})
	r.operator(t, "drain", "node", "1", "--undo", "--wait", "--timeout", "30s")
}

// killedNodeGone SIGKILLs node 1: the node table shows it gone within 1.5 s (its lease
// membership ends with its connection), then it restarts.
func (r *run) killedNodeGone(t *testing.T) {
	t.Helper()
	g := r.f.gw(1)
	at := time.Now()
	g.kill(t)
	checkfor.Eventually(t, 1500*time.Millisecond, "node 1 gone in the node table", func() error {
		nodes, err := r.nodeTable(t)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(nodes[1], "gone/") {
			return fmt.Errorf("nodes %v", nodes)
		}
		return nil
	})
	t.Logf("SIGKILLed node 1 shown gone %v after the signal", time.Since(at).Round(time.Millisecond))
	r.f.restart(g)
}

// nodeTable is `claims --nodes -o json`: node -> "state/partitions".
func (r *run) nodeTable(t *testing.T) (map[int32]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := r.f.command(ctx, "claims", "--nodes", "-o", "json", "--iggy", r.f.iggyAddr())
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("claims --nodes: %v", err)
	}
	var doc struct {
		Data []struct {
			Node       int32  `json:"node"`
			State      string `json:"state"`
			Partitions []int  `json:"partitions"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("claims --nodes -o json: %v\n%s", err, out)
	}
	nodes := map[int32]string{}
	for _, n := range doc.Data {
		nodes[n.Node] = fmt.Sprintf("%s/%d", n.State, len(n.Partitions))
	}
	return nodes, nil
}

// operatorFails runs iggy-kafka with args, expecting it to fail, and returns its exit status
// and stderr.
func (r *run) operatorFails(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := r.f.command(ctx, append(args, "--iggy", r.f.iggyAddr())...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("iggy-kafka %s: %v, want a failure\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return ee.ExitCode(), errb.String()
}

// operator runs the built iggy-kafka with args against the fleet's store and returns its stdout
// and stderr; any exit but 0 fails the test.
func (r *run) operator(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := r.f.command(ctx, append(args, "--iggy", r.f.iggyAddr())...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		t.Fatalf("iggy-kafka %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// checkServedEvents reads the drain's NDJSON progress, when it printed any, and checks that
// every partition of owned was served by another node.
func checkServedEvents(t *testing.T, out string, owned []int) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		t.Log("drain -o json printed no progress lines")
		return
	}
	served := map[int]int32{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e struct {
			Partition int    `json:"partition"`
			Phase     string `json:"phase"`
			Node      int32  `json:"node"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("drain progress line %q: %v", sc.Text(), err)
			continue
		}
		if e.Phase == "served" {
			served[e.Partition] = e.Node
		}
	}
	t.Logf("drain progress: %d lines, served: %v", strings.Count(out, "\n"), served)
	for _, p := range owned {
		if n, ok := served[p]; !ok || n == drained {
			t.Errorf("drain progress: log partition %d served by %v (found %t)", p, n, ok)
		}
	}
}

// checkDrainedNode asks the drained node alone: Metadata lists it but names it leader of no
// partition, and it takes a Produce and answers a Fetch of that record.
func (r *run) checkDrainedNode(t *testing.T) {
	t.Helper()
	g := r.f.gw(drained)
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.addr), kgo.ClientID("drained-direct"), r.tp.dialer("drained-direct"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seed := cl.SeedBrokers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	checkfor.Eventually(t, 10*time.Second, fmt.Sprintf("Metadata of node %d: listed, leading nothing", drained), func() error {
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		mreq.Topics = append(mreq.Topics, mt)
		resp, err := seed.Request(ctx, mreq)
		if err != nil {
			return err
		}
		m := resp.(*kmsg.MetadataResponse)
		listed := false
		for _, b := range m.Brokers {
			listed = listed || b.NodeID == drained
		}
		if !listed || len(m.Brokers) != gateways {
			return fmt.Errorf("brokers %v", m.Brokers)
		}
		for _, mt := range m.Topics {
			for _, p := range mt.Partitions {
				if p.Leader == drained {
					return fmt.Errorf("partition %d led by drained node %d", p.Partition, drained)
				}
			}
		}
		return nil
	})

	value := fmt.Sprintf("direct-to-drained-%d", time.Now().UnixNano())
	preq := kmsg.NewPtrProduceRequest()
	preq.Acks, preq.TimeoutMillis = -1, 10000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition, pp.Records = 0, oneRecordBatch([]byte(value))
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	resp, err := seed.Request(ctx, preq)
	if err != nil {
		t.Fatalf("Produce to drained node %d: %v", drained, err)
	}
	pr := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
		t.Fatalf("Produce to drained node %d: %v", drained, err)
	}

	freq := kmsg.NewPtrFetchRequest()
	freq.MaxWaitMillis, freq.MaxBytes = 500, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = 0, pr.BaseOffset, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	freq.Topics = append(freq.Topics, ft)
	resp, err = seed.Request(ctx, freq)
	if err != nil {
		t.Fatalf("Fetch from drained node %d: %v", drained, err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		t.Fatalf("Fetch from drained node %d: %+v", drained, fr)
	}
	fpr := fr.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(fpr.ErrorCode); err != nil || !bytes.Contains(fpr.RecordBatches, []byte(value)) {
		t.Fatalf("Fetch from drained node %d at %d: %v, %d bytes without %q", drained, pr.BaseOffset, err, len(fpr.RecordBatches), value)
	}
}

// oneRecordBatch is a magic-2 batch of one record with value v: no key, no headers, no
// producer id, CRC-32C over everything after the CRC field.
func oneRecordBatch(v []byte) []byte {
	var rec []byte
	rec = append(rec, 0)               // attributes
	rec = binary.AppendVarint(rec, 0)  // timestamp delta
	rec = binary.AppendVarint(rec, 0)  // offset delta
	rec = binary.AppendVarint(rec, -1) // key: null
	rec = binary.AppendVarint(rec, int64(len(v)))
	rec = append(rec, v...)
	rec = binary.AppendVarint(rec, 0) // headers
	records := binary.AppendVarint(nil, int64(len(rec)))
	records = append(records, rec...)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: 1, Records: records}
	b.Length = int32(len(b.AppendTo(nil)) - 12)
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}
