package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// metadataBrokers asks the gateway at addr for Metadata (uncached, unlike kadm's) and returns
// its brokers as id@host:port, sorted.
func metadataBrokers(ctx context.Context, addr string) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range resp.Brokers {
		out = append(out, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
	}
	slices.Sort(out)
	return out, nil
}

// serve --fleet 3 is a fleet: three brokers in Metadata, groups coordinated by more than one of
// them, 16 coordinator log partitions each owned by one node, claims and FindCoordinator in
// agreement; SIGTERM stops it cleanly within the drain timeout.
func TestServeFleetEndToEnd(t *testing.T) {
	const (
		n            = 3
		drainTimeout = 5 * time.Second
	)
	dir := t.TempDir()
	bin := testbin.Path(t)
	base := freeport.Consecutive(t, n)
	storeAddr := freeport.Addr(t)
	kafkaAddrs := make([]string, n)
	for i := range kafkaAddrs {
		kafkaAddrs[i] = "127.0.0.1:" + strconv.Itoa(base+i)
	}
	env := append(os.Environ(), "XDG_CONFIG_HOME="+dir)

	logs := &syncBuffer{}
	srv := exec.Command(bin, "serve", "--fleet", strconv.Itoa(n), "--bind", kafkaAddrs[0], "--store-listen", storeAddr,
		"--data", filepath.Join(dir, "data"), "--drain-timeout", drainTimeout.String())
	srv.Env = env
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("serve --fleet output:\n%s", testbin.Tail(logs.String(), 60))
		}
	})
	for _, addr := range kafkaAddrs {
		checkfor.Eventually(t, 30*time.Second, "Kafka answers on "+addr, kafkaAnswers(addr))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddrs...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	want := []string{}
	for i := range n {
		want = append(want, fmt.Sprintf("%d@127.0.0.1:%d", i+1, base+i))
	}
	// Metadata names the gateways the fleet has heard from: all three once each announced
	// itself, whichever gateway answers.
	for _, addr := range kafkaAddrs {
		checkfor.Eventually(t, 30*time.Second, "Metadata from "+addr+" lists the 3 gateways", func() error {
			brokers, err := metadataBrokers(ctx, addr)
			if err != nil {
				return err
			}
			if !slices.Equal(brokers, want) {
				return fmt.Errorf("Metadata brokers %v, want %v", brokers, want)
			}
			return nil
		})
	}

	// One group on each coordinator log partition.
	groups := map[int]string{}
	for i := 0; len(groups) < 16; i++ {
		g := "fleet-group-" + strconv.Itoa(i)
		if _, ok := groups[record.Partition(g)]; !ok {
			groups[record.Partition(g)] = g
		}
	}
	var rows []claims.PartitionRow
	checkfor.Eventually(t, 30*time.Second, "claims and FindCoordinator agree on 16 owned partitions over more than one node", func() error {
		claimsCmd := exec.CommandContext(ctx, bin, "claims", "-o", "json", "--iggy", storeAddr, "--kafka-bootstrap", strings.Join(kafkaAddrs, ","))
		claimsCmd.Env = env
		var stderr bytes.Buffer
		claimsCmd.Stderr = &stderr
		out, err := claimsCmd.Output()
		if err != nil {
			return fmt.Errorf("claims: %v: %s", err, stderr.String())
		}
		var doc struct {
			Kind string        `json:"kind"`
			Data claims.Tables `json:"data"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			return fmt.Errorf("claims -o json: %v\n%s", err, out)
		}
		rows = doc.Data.Partitions
		if doc.Kind != "claims" || len(rows) != 16 {
			return fmt.Errorf("claims: kind %q, %d rows, want 16", doc.Kind, len(rows))
		}
		for i, r := range rows {
			if r.Partition != i {
				return fmt.Errorf("row %d is partition %d", i, r.Partition)
			}
			if r.OwnerNode == nil || *r.OwnerNode < 1 || *r.OwnerNode > n {
				return fmt.Errorf("partition %d: owner %v, want one of nodes 1..%d", i, r.OwnerNode, n)
			}
			if len(r.Flags) > 0 {
				return fmt.Errorf("partition %d: flags %v", i, r.Flags)
			}
		}
		ids := make([]string, 0, len(groups))
		for _, g := range groups {
			ids = append(ids, g)
		}
		nodes := map[int32]bool{}
		for _, r := range adm.FindGroupCoordinators(ctx, ids...) {
			if r.Err != nil {
				return fmt.Errorf("FindCoordinator %s: %w", r.Name, r.Err)
			}
			p := record.Partition(r.Name)
			if owner := *rows[p].OwnerNode; r.NodeID != owner {
				return fmt.Errorf("group %s (partition %d): FindCoordinator names node %d, claims node %d", r.Name, p, r.NodeID, owner)
			}
			nodes[r.NodeID] = true
		}
		if len(nodes) < 2 {
			return fmt.Errorf("every group coordinated by %v", nodes)
		}
		return nil
	})
	cl.Close()

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
	case <-time.After(drainTimeout):
		t.Fatalf("still running %v after SIGTERM", drainTimeout)
	}
	t.Logf("fleet of %d stopped %v after SIGTERM", n, time.Since(signalled).Round(time.Millisecond))
	// Each gateway stopped cleanly, in node order.
	last := -1
	for i := 1; i <= n; i++ {
		at := -1
		for j, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `msg="gateway stopped"`) && strings.Contains(line, "err=<nil>") && strings.HasSuffix(line, " node="+strconv.Itoa(i)) {
				at = j
			}
		}
		if at < 0 {
			t.Errorf("no clean stop of node %d in the log", i)
		} else if at < last {
			t.Errorf("node %d stopped before node %d", i, i-1)
		}
		last = at
	}
}

// --fleet chooses node ids, brokers and advertised addresses itself: setting any is refused.
func TestServeFleetRefusesPerGatewaySettings(t *testing.T) {
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--node-id", "2"}, "node-id is set (from flag --node-id)"},
		{[]string{"IGGY_KAFKA_BROKERS=1@localhost:9092"}, nil, "brokers is set (from env IGGY_KAFKA_BROKERS)"},
		{nil, []string{"--advertised-addr", "example.com:9092"}, "advertised-addr is set (from flag --advertised-addr)"},
		{nil, []string{"--bind", "127.0.0.1:0"}, "--fleet needs a port"},
		{nil, []string{"--fleet", "-1"}, "must be in 0..64"},
	}
	// Were a case accepted, the fleet would stop at once on the ended context instead of
	// serving on.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range cases {
		addrs := freeport.Addrs(t, 2)
		args := append([]string{"serve", "--fleet", "3", "--data", t.TempDir(), "--bind", addrs[0], "--store-listen", addrs[1]}, c.args...)
		var stdout, errb bytes.Buffer
		code := run(ctx, args, append(c.env, "XDG_CONFIG_HOME="+t.TempDir()), &stdout, &errb)
		stderr := errb.String()
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want exit %d and %q", c.env, c.args, code, stderr, exitUsage, c.want)
		}
	}
}
