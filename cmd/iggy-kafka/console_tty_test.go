package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// proc is a process of the binary whose output goes to a file, killed when the test ends.
type proc struct {
	t    *testing.T
	name string
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// ttyLab is the processes of a console test in a real terminal: a store and gateways, each a
// process with its log in dir, killed when the test ends; when it failed, the test's log shows
// the console's stderr and the tail of every process's log.
type ttyLab struct {
	t        *testing.T
	dir      string
	env      []string
	children []*proc
}

func newTTYLab(t *testing.T) *ttyLab {
	dir := t.TempDir()
	l := &ttyLab{t: t, dir: dir, env: []string{"XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH"), "HOME=" + dir}}
	t.Cleanup(func() {
		for _, c := range l.children {
			if c.cmd != nil && c.cmd.ProcessState == nil {
				c.kill()
			}
		}
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "console.stderr")); err == nil {
				t.Logf("----- console stderr -----\n%s", b)
			}
			for _, c := range l.children {
				t.Logf("----- %s -----\n%s", c.name, testbin.TailFile(c.log, 30))
			}
		}
	})
	return l
}

// startStore starts `store` on addr with the extra flags and waits until it answers.
func (l *ttyLab) startStore(addr string, extra ...string) *proc {
	store := &proc{t: l.t, name: "store", log: filepath.Join(l.dir, "store.log"),
		args: append([]string{"store", "--listen", addr, "--data", filepath.Join(l.dir, "data")}, extra...)}
	store.start(l.env)
	l.children = append(l.children, store)
	checkfor.Eventually(l.t, 20*time.Second, "the store answers", iggyAnswers(addr))
	return store
}

// startGateways starts a fleet of `serve` on the store, node i+1 on kafka[i], with the extra
// flags, and waits until every one answers Kafka.
func (l *ttyLab) startGateways(storeAddr string, kafka []string, extra ...string) {
	var brokers []string
	for i, a := range kafka {
		brokers = append(brokers, fmt.Sprintf("%d@%s", i+1, a))
	}
	for i, a := range kafka {
		g := &proc{t: l.t, name: "gateway-" + strconv.Itoa(i+1), log: filepath.Join(l.dir, fmt.Sprintf("gateway-%d.log", i+1)),
			args: append([]string{"serve", "--iggy", storeAddr, "--node-id", strconv.Itoa(i + 1), "--bind", a, "--brokers", strings.Join(brokers, ",")}, extra...)}
		g.start(l.env)
		l.children = append(l.children, g)
	}
	for _, a := range kafka {
		checkfor.Eventually(l.t, 30*time.Second, "Kafka answers on "+a, kafkaAnswers(a))
	}
}

func (c *proc) start(env []string) {
	c.t.Helper()
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	c.cmd = exec.Command(testbin.Path(c.t), c.args...)
	c.cmd.Env, c.cmd.Stdout, c.cmd.Stderr = env, f, f
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	c.done = done
	go func() {
		_ = c.cmd.Wait()
		f.Close()
		close(done)
	}()
}

func (c *proc) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// tmuxPane is a terminal of a fixed size running one command.
type tmuxPane struct {
	t       *testing.T
	tmux    string
	sock    string
	session string
}

func startTmux(t *testing.T, dir string, w, h int, env []string, command string) *tmuxPane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		// The test command (scripts/test.sh) installs tmux and sets this, so CI never skips.
		if os.Getenv("IGGY_TEST_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed and IGGY_TEST_REQUIRE_TMUX is set")
		}
		t.Skip("tmux is not installed")
	}
	p := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock"), session: "console-" + filepath.Base(dir)}
	args := []string{"new-session", "-d", "-s", p.session, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "env"}
	args = append(append(args, env...), "sh", "-c", command+" 2>"+filepath.Join(dir, "console.stderr"))
	if out, err := p.run(args...); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = p.run("kill-server") })
	return p
}

func (p *tmuxPane) run(args ...string) (string, error) {
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	return string(out), err
}

func (p *tmuxPane) screen() string {
	s, err := p.run("capture-pane", "-p", "-t", p.session)
	if err != nil {
		return "(no screen: " + err.Error() + ": " + s + ")"
	}
	return s
}

func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		if out, err := p.run("send-keys", "-t", p.session, k); err != nil {
			p.t.Fatalf("send-keys %s: %v %s", k, err, out)
		}
	}
}

// waitScreen waits until the screen holds every one of want.
func (p *tmuxPane) waitScreen(within time.Duration, want ...string) {
	p.t.Helper()
	checkfor.Eventually(p.t, within, fmt.Sprintf("%q on screen", want), func() error {
		s := p.screen()
		for _, w := range want {
			if !strings.Contains(s, w) {
				return errors.New("screen:\n" + s)
			}
		}
		return nil
	})
}

// The console end to end, in a real terminal, on a store and three gateways, each a process,
// with a franz-go group consuming: a drain started with d and y in the view moves the node's
// partitions (and no other) without a rebalance; a SIGKILL of the store shows the banner within
// 2 s; the store's return resumes the view, which then undoes the drain with u and y.
func TestConsoleEndToEnd(t *testing.T) {
	lab := newTTYLab(t)
	dir, env := lab.dir, lab.env
	addrs := freeport.Addrs(t, 4)
	storeAddr, kafka := addrs[0], addrs[1:]
	store := lab.startStore(storeAddr, "--heartbeat-interval", "2s")
	lab.startGateways(storeAddr, kafka, "--heartbeat-interval", "2s", "--drain-timeout", "2s")
	// No --kafka-bootstrap: claims --group and the console find the gateways at the addresses
	// they announce in the log.
	cliEnv := []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_OPERATOR_IGGY=" + storeAddr}
	fleetNow := func() (claims.Tables, error) {
		code, out, stderr := runCLI(t, cliEnv, "claims", "-o", "json")
		var doc struct {
			Data claims.Tables `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
			return claims.Tables{}, fmt.Errorf("claims: exit %d %v %s", code, err, stderr)
		}
		return doc.Data, nil
	}
	checkfor.Eventually(t, 30*time.Second, "16 partitions owned by 3 serving gateways", func() error {
		f, err := fleetNow()
		if err != nil {
			return err
		}
		for _, r := range f.Partitions {
			if r.OwnerNode == nil || len(r.Flags) > 0 {
				return fmt.Errorf("partition %d: owner %v flags %v", r.Partition, r.OwnerNode, r.Flags)
			}
		}
		if len(f.Nodes) != 3 {
			return fmt.Errorf("%d nodes", len(f.Nodes))
		}
		return nil
	})

	// A consuming group, and a producer feeding it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(kafka...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	if r, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	var assigned, revoked, consumed atomic.Int64
	const group = "console-e2e"
	consumer, err := kgo.NewClient(kgo.SeedBrokers(kafka...), kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"),
		kgo.AutoCommitInterval(300*time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { assigned.Add(1) }),
		kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) { revoked.Add(1) }),
		kgo.OnPartitionsLost(func(context.Context, *kgo.Client, map[string][]int32) { revoked.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(kafka...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		producer.Close()
		consumer.CloseAllowingRebalance()
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			fs := consumer.PollFetches(ctx)
			consumed.Add(int64(fs.NumRecords()))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			producer.Produce(ctx, &kgo.Record{Value: []byte("order " + strconv.Itoa(i))}, nil)
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	checkfor.Eventually(t, 30*time.Second, "the group consumes", func() error {
		if assigned.Load() == 0 || consumed.Load() < 50 {
			return fmt.Errorf("assigned %d, consumed %d", assigned.Load(), consumed.Load())
		}
		return nil
	})
	// claims --group joins the log and the group's coordinator: state, members, lag.
	checkfor.Eventually(t, 20*time.Second, "claims --group with the group's lag", func() error {
		code, out, stderr := runCLI(t, cliEnv, "claims", "--group", group, "-o", "json")
		var doc struct {
			Kind string                   `json:"kind"`
			Data []livegroups.GroupDetail `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK || doc.Kind != "claims.group" || len(doc.Data) != 1 {
			return fmt.Errorf("exit %d %v %s %s", code, err, out, stderr)
		}
		d := doc.Data[0]
		if d.State != "Stable" || len(d.Members) != 1 || d.Members[0].Assignment != "orders[0,1,2]" || len(d.Lag) != 3 || !d.Agrees || d.Generation == nil {
			return fmt.Errorf("group %+v", d)
		}
		committed := 0
		for _, l := range d.Lag {
			if l.LogEnd == nil || l.Lag == nil || l.LagSeconds == nil || l.ClientID == "" {
				return fmt.Errorf("lag row %+v", l)
			}
			if l.Committed != nil {
				committed++
			}
		}
		if committed == 0 {
			return fmt.Errorf("no committed offset in %+v", d.Lag)
		}
		return nil
	})
	for _, f := range []struct{ format, want string }{{"text", "LAG-TIME"}, {"yaml", "kind: claims.group"}} {
		if code, out, stderr := runCLI(t, cliEnv, "claims", "--group", group, "-o", f.format); code != exitOK || !strings.Contains(out, f.want) || !strings.Contains(out, "orders[0,1,2]") {
			t.Fatalf("claims --group -o %s: exit %d\n%s%s", f.format, code, out, stderr)
		}
	}

	// The node to drain coordinates the group.
	fc := adm.FindGroupCoordinators(ctx, group)[group]
	if fc.Err != nil {
		t.Fatal(fc.Err)
	}
	drained := fc.NodeID
	before, err := fleetNow()
	if err != nil {
		t.Fatal(err)
	}

	pane := startTmux(t, dir, 120, 35, append([]string{"TERM=xterm-256color", "LANG=C.UTF-8"}, cliEnv...), testbin.Path(t)+" claims --watch")
	pane.waitScreen(20*time.Second, "3 nodes (3 serving)", "16/16 owned")
	pane.keys("Tab", "Tab")
	for range drained - 1 {
		pane.keys("j")
	}
	pane.keys("d")
	who := "node " + strconv.Itoa(int(drained))
	pane.waitScreen(10*time.Second, "[DRAIN "+who+"] the plan: every partition that will move", "drain "+who+"? y drains")
	pane.keys("y")
	pane.waitScreen(30*time.Second, who+" drained: every partition is claimed and served elsewhere")

	after, err := fleetNow()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range after.Partitions {
		was := *before.Partitions[i].OwnerNode
		switch {
		case *r.OwnerNode == drained:
			t.Errorf("partition %d still owned by the drained node %d", r.Partition, drained)
		case was != drained && *r.OwnerNode != was:
			t.Errorf("partition %d moved from node %d to node %d: a collateral move", r.Partition, was, *r.OwnerNode)
		}
	}
	seen := consumed.Load()
	checkfor.Eventually(t, 10*time.Second, "the group consumes after the drain", func() error {
		if consumed.Load() < seen+50 {
			return fmt.Errorf("consumed %d, %d at the drain", consumed.Load(), seen)
		}
		return nil
	})
	if a, r := assigned.Load(), revoked.Load(); a != 1 || r != 0 {
		t.Fatalf("the group rebalanced: %d assignments, %d revocations or losses", a, r)
	}

	// The store dies: the banner within 2 s, the rows kept.
	store.kill()
	killed := time.Now()
	pane.waitScreen(2*time.Second, "! no answer from the store at "+storeAddr)
	t.Logf("banner %v after the store's SIGKILL", time.Since(killed).Round(time.Millisecond))
	if s := pane.screen(); !strings.Contains(s, "STALE since") || !strings.Contains(s, "16/16 owned") {
		t.Fatalf("the view lost its rows or did not mark them stale:\n%s", s)
	}
	store.start(env)
	pane.waitScreen(30*time.Second, "16/16 owned", "updated")
	checkfor.Eventually(t, 30*time.Second, "the banner gone", func() error {
		if s := pane.screen(); strings.Contains(s, "no answer from the store") {
			return errors.New("screen:\n" + s)
		}
		return nil
	})
	// And the view still acts: undo the drain.
	pane.keys("u")
	pane.waitScreen(10*time.Second, "undo the drain of "+who+"?")
	pane.keys("y")
	pane.waitScreen(30*time.Second, who+" serving again")
	// A seek from the group's page, as an operator types it: the group consumes, so it is
	// refused with its member named, and nothing moves.
	// The undo moves partitions back: wait until the group's coordinator serves again.
	checkfor.Eventually(t, 15*time.Second, "the group's coordinator answers", func() error {
		d, err := adm.DescribeGroups(ctx, group)
		if err == nil {
			err = d.Error()
		}
		return err
	})
	gp := strconv.Itoa(record.Partition(group))
	pane.keys("Tab", "/", "p"+gp, "Enter", "Enter")
	pane.waitScreen(10*time.Second, "[GROUPS of partition "+gp+"]")
	pane.keys("Enter")
	pane.waitScreen(10*time.Second, "[GROUP "+group+"]")
	pane.keys("o")
	pane.waitScreen(5*time.Second, "["+"SEEK "+group+"] where to move")
	pane.keys("to earliest", "Enter")
	pane.waitScreen(15*time.Second, "seek refused: group "+group+" has 1 live member(s)")
	pane.keys("q")
	checkfor.Eventually(t, 10*time.Second, "q quits", func() error {
		if _, err := pane.run("has-session", "-t", pane.session); err == nil {
			return errors.New("session still running")
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "console.stderr")); len(b) > 0 {
		t.Fatalf("the console wrote to stderr: %s", b)
	}
}
