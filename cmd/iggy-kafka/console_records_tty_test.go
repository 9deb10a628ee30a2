package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// The topics screen and the tail pane end to end, in a real terminal, on a store and two
// gateways, each a process: the topics screen shows the partitions' ends, rates from its second
// reading, and a group that committed with its lag; records produced with keys, headers and
// JSON values show in the tail pane of their partition, a record produced while it is open
// shows there live, a search finds it, a jump starts again from an offset, and enter shows a
// record whole.
func TestConsoleRecordsEndToEnd(t *testing.T) {
	lab := newTTYLab(t)
	dir := lab.dir
	addrs := freeport.Addrs(t, 3)
	storeAddr, kafka := addrs[0], addrs[1:]
	lab.startStore(storeAddr)
	lab.startGateways(storeAddr, kafka)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafka...), kgo.DefaultProduceTopic("events"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if r, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	produce := func(p int32, key, value string) {
		t.Helper()
		r := &kgo.Record{Partition: p, Key: []byte(key), Value: []byte(value), Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("e2e")}}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	for i := range 20 {
		produce(0, "user-"+strconv.Itoa(i%3), fmt.Sprintf(`{"n":%d,"kind":"order"}`, i))
	}
	produce(1, "other", "partition one only")
	// A group has read partition 0's first 15 records (an offset commit of a group without
	// members, as a consumer that left writes it), so the topics screen names it with a lag of 5.
	const group = "readers"
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 15, LeaderEpoch: -1})
	checkfor.Eventually(t, 20*time.Second, "the group's commit", func() error {
		r, err := kadm.NewClient(cl).CommitOffsets(ctx, group, offs)
		if err == nil {
			err = r.Error()
		}
		return err
	})

	cliEnv := []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_OPERATOR_IGGY=" + storeAddr}
	pane := startTmux(t, dir, 120, 35, append([]string{"TERM=xterm-256color", "LANG=C.UTF-8"}, cliEnv...), testbin.Path(t)+" claims --watch --read-only")
	pane.waitScreen(20*time.Second, "16/16 owned")
	pane.keys("t")
	// The topic row sums both partitions: 21 records.
	pane.waitScreen(10*time.Second, "[TOPICS] 1 topic", "events", "all 2 21")
	// The second reading, on the engine's beats 2 s later, has rates; the group and its lag come
	// from the coordinator log the console follows.
	pane.waitScreen(10*time.Second, "rates over the last")
	checkfor.Eventually(t, 5*time.Second, "partition 0's row: end 20, lag 5, read by "+group, func() error {
		s := pane.screen()
		for _, l := range strings.Split(s, "\n") {
			// TOPIC PART END IN/S OUT/S LAG BYTES-IN/S BYTES-OUT/S SIZE GROUPS
			if f := strings.Fields(l); len(f) == 10 && f[0] == "events" && f[1] == "0" && f[2] == "20" && f[5] == "5" && f[9] == group {
				return nil
			}
		}
		return fmt.Errorf("screen:\n%s", s)
	})
	pane.keys("j", "Enter")
	pane.waitScreen(15*time.Second, "[TAIL events:0] following · 20 records loaded, offsets 0-19", `{"n":19,"kind":"order"}`, "source=e2e", "user-0")
	if s := pane.screen(); strings.Contains(s, "partition one only") {
		t.Fatalf("the tail of partition 0 shows partition 1's record:\n%s", s)
	}
	produce(0, "late", `{"n":20,"kind":"late-arrival"}`)
	pane.waitScreen(15*time.Second, "21 records loaded, offsets 0-20", "late-arrival")
	pane.keys("/", "late-arrival", "Enter")
	pane.waitScreen(5*time.Second, `search "late-arrival": 1 of 1`, "PAUSED")
	pane.keys(":", "5", "Enter")
	pane.waitScreen(15*time.Second, "following · 16 records loaded, offsets 5-20 · from 5")
	pane.keys("Enter")
	pane.waitScreen(5*time.Second, "[RECORD events[0] offset 20]", `"kind": "late-arrival"`, "headers  source=e2e (text)")
	pane.keys("q")
	checkfor.Eventually(t, 10*time.Second, "q quits", func() error {
		if _, err := pane.run("has-session", "-t", pane.session); err == nil {
			return fmt.Errorf("session still running:\n%s", pane.screen())
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "console.stderr")); len(b) > 0 {
		t.Fatalf("the console wrote to stderr: %s", b)
	}
}
