package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
)

// seekDoc is `group seek -o json`.
type seekDoc struct {
	Kind    string             `json:"kind"`
	Data    []groupadmin.Step  `json:"data"`
	Summary groupadmin.Summary `json:"summary"`
}

// consumed is a record a group read, by partition and offset.
type consumed struct {
	Partition int32
	Offset    int64
}

// consumeGroup joins group on topic, reads until it has want records (or the deadline), commits,
// and leaves the group; it returns what it read in order of partition and offset.
func consumeGroup(t *testing.T, seeds []string, group, topic string, want int) []consumed {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []consumed
	for len(got) < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, consumed{r.Partition, r.Offset}) })
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	slices.SortFunc(got, func(a, b consumed) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(a.Offset - b.Offset)
	})
	return got
}

func span(parts []int32, from, to int64) []consumed {
	var out []consumed
	for _, p := range parts {
		for o := from; o < to; o++ {
			out = append(out, consumed{p, o})
		}
	}
	return out
}

// A group consumes a topic and stops; group list and describe find it at the gateways the log
// announces (no --kafka-bootstrap); a dry run of a seek names the records to read again and
// writes nothing; executed, the group reads exactly those records again. Bad input is refused
// in one sentence each, with nothing written.
func TestGroupSeekEndToEnd(t *testing.T) {
	srv, gws := testfleet.Start(t, 3, nil)
	seeds := []string{gws[0].Addr().String(), gws[1].Addr().String(), gws[2].Addr().String()}
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + srv.Addr, "XDG_CONFIG_HOME=" + t.TempDir(), "IGGY_KAFKA_REQUEST_TIMEOUT=5s"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	// Ten records per partition, record i a minute after record i-1, the first two hours ago.
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	for p := range int32(2) {
		for i := range 10 {
			r := &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "v%d-%d", p, i), Timestamp: base.Add(time.Duration(i) * time.Minute)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	parts := []int32{0, 1}
	if got := consumeGroup(t, seeds, "g", "orders", 20); !slices.Equal(got, span(parts, 0, 10)) {
		t.Fatalf("first read: %v", got)
	}
	committedAt := func() map[int32]int64 {
		offs, err := adm.FetchOffsets(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]int64{}
		offs.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
		return out
	}
	if c := committedAt(); c[0] != 10 || c[1] != 10 {
		t.Fatalf("committed %v", c)
	}

	// The gateways are found through their announcements: the list shows the group.
	checkfor.Eventually(t, 10*time.Second, "group list shows g", func() error {
		code, out, stderr := runCLI(t, env, "group", "list", "-o", "json")
		var doc struct {
			Data []groupadmin.GroupRow `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil {
			return fmt.Errorf("exit %d %v: %s", code, err, stderr)
		}
		if len(doc.Data) != 1 || doc.Data[0].Group != "g" || doc.Data[0].State != "Empty" || doc.Data[0].Lag == nil || *doc.Data[0].Lag != 0 {
			return fmt.Errorf("rows %+v", doc.Data)
		}
		return nil
	})
	// The shell completes the group's name and the targets.
	for _, tc := range []struct{ args, want []string }{
		{[]string{"group", "seek", ""}, []string{"g\tEmpty"}},
		{[]string{"group", "describe", ""}, []string{"g\tEmpty"}},
		{[]string{"group", "seek", "g", "--to", ""}, []string{"earliest", "latest"}},
	} {
		code, out, stderr := runCLI(t, env, append([]string{"__complete"}, tc.args...)...)
		for _, w := range tc.want {
			if code != exitOK || !strings.Contains(out, w) {
				t.Errorf("completing %v: exit %d %q %s, want %q", tc.args, code, out, stderr, w)
			}
		}
	}
	code, out, stderr := runCLI(t, env, "group", "describe", "g", "-o", "json")
	var desc struct {
		Kind string                   `json:"kind"`
		Data []livegroups.GroupDetail `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &desc); code != exitOK || err != nil || desc.Kind != "group.describe" || len(desc.Data) != 1 || !desc.Data[0].InLog || len(desc.Data[0].Lag) != 2 {
		t.Fatalf("describe: exit %d %v\n%s\n%s", code, err, out, stderr)
	}

	seek := func(args ...string) (int, seekDoc, string) {
		t.Helper()
		code, out, stderr := runCLI(t, env, append([]string{"group", "seek", "g", "-o", "json"}, args...)...)
		var doc seekDoc
		if code == exitOK {
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
		return code, doc, stderr
	}

	// Dry runs: the plan names the records to read again; nothing is written.
	code, plan, stderr := seek("--shift", "-3", "--dry-run")
	if code != exitOK || plan.Kind != "group.seek" || plan.Summary.Reread != 6 || plan.Summary.Done || len(plan.Data) != 2 ||
		plan.Data[0].New != 7 || plan.Data[1].New != 7 || *plan.Data[0].Committed != 10 || plan.Data[0].Reread != 3 {
		t.Fatalf("shift dry run: exit %d %+v %s", code, plan, stderr)
	}
	code, plan, _ = seek("--to", "earliest", "--topic", "orders:1", "--dry-run")
	if code != exitOK || len(plan.Data) != 1 || plan.Data[0].Partition != 1 || plan.Data[0].New != 0 || plan.Summary.Reread != 10 {
		t.Fatalf("earliest dry run: %+v", plan)
	}
	code, plan, _ = seek("--to-time", base.Add(5*time.Minute).Format(time.RFC3339), "--dry-run")
	if code != exitOK || plan.Data[0].New != 5 || plan.Data[1].New != 5 || plan.Summary.Reread != 10 {
		t.Fatalf("time dry run: %+v", plan)
	}
	// Past either end: clamped, and said.
	code, plan, _ = seek("--shift", "5", "--dry-run")
	if code != exitOK || plan.Summary.Clamped != 2 || plan.Data[0].New != 10 || plan.Data[0].Clamped != "15 is past the log end: clamped to 10" {
		t.Fatalf("shift past the end: %+v", plan)
	}
	code, plan, _ = seek("--shift", "-50", "--dry-run")
	if code != exitOK || plan.Summary.Clamped != 2 || plan.Data[1].New != 0 || plan.Data[1].Clamped != "-40 is before the log start: clamped to 0" {
		t.Fatalf("shift past the start: %+v", plan)
	}
	code, text, _ := runCLI(t, env, "group", "seek", "g", "--shift", "-3", "--dry-run")
	if code != exitOK || !strings.Contains(text, "TOPIC   PARTITION  COMMITTED  LOG-START  LOG-END  NEW-OFFSET  RE-READ  SKIP  NOTE\norders  0          10         0          10       7           3        0") ||
		!strings.Contains(text, "group g would move 2 of 2 partition(s) to a shift of -3: 6 record(s) to read again, 0 to skip") {
		t.Fatalf("text plan:\n%s", text)
	}

	// Bad input: one sentence each, nothing written. The unknown group's coordinator partition
	// may still be in its first claim: wait until its coordinator answers.
	checkfor.Eventually(t, 15*time.Second, "the coordinator of group nope answers", func() error {
		_, err := adm.DescribeGroups(ctx, "nope")
		return err
	})
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"group", "seek", "nope", "--to", "earliest", "--yes"}, exitFailed, "no gateway knows group nope and it has no committed offsets"},
		{[]string{"group", "seek", "g", "--to", "earliest", "--topic", "missing", "--yes"}, exitFailed, "topic missing does not exist"},
		{[]string{"group", "seek", "g", "--to", "earliest", "--topic", "orders:7", "--yes"}, exitFailed, "topic orders has no partition 7 (it has 2)"},
		{[]string{"group", "seek", "g", "--to", "earliest"}, exitUsage, "confirm with --yes when stdin is not a terminal"},
		{[]string{"group", "seek", "g", "--to", "first"}, exitUsage, `--to "first": want earliest or latest`},
		{[]string{"group", "seek", "g", "--to", "earliest", "--shift", "1"}, exitUsage, "--to and --shift do not go together"},
		{[]string{"group", "seek", "g", "--yes"}, exitUsage, "say where to move the offsets"},
		{[]string{"group", "seek", "g", "--to-time", time.Now().Add(time.Hour).Format(time.RFC3339)}, exitUsage, "is in the future"},
		{[]string{"group", "describe", "nope"}, exitFailed, "group nope is unknown"},
		{[]string{"group", "seek", "g", "--to-commit-at", "2000-01-01T00:00:00Z", "--yes"}, exitFailed, "the coordinator log holds no committed offset of group g at 2000-01-01T00:00:00Z"},
	} {
		code, _, stderr := runCLI(t, env, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, want %d saying %q; stderr %q", tc.args, code, tc.code, tc.says, stderr)
		}
	}
	if c := committedAt(); c[0] != 10 || c[1] != 10 {
		t.Fatalf("bad input moved the offsets: %v", c)
	}

	// A group with a live member is refused, naming it.
	member, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders"), kgo.ClientID("busy-worker"),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for pctx.Err() == nil {
			member.PollFetches(pctx)
		}
	}()
	checkfor.Eventually(t, 15*time.Second, "a member refuses the seek", func() error {
		code, _, stderr := runCLI(t, env, "group", "seek", "g", "--to", "earliest", "--yes")
		if code != exitFailed || !strings.Contains(stderr, "group g has 1 live member(s)") || !strings.Contains(stderr, "client busy-worker") {
			return fmt.Errorf("exit %d: %s", code, stderr)
		}
		return nil
	})
	// A member that joins between the plan and the commit: the coordinator refuses the commit
	// whole.
	raced := groupadmin.BuildPlan("g", groupadmin.Target{Kind: groupadmin.Earliest}, []groupadmin.Partition{
		{Topic: "orders", Partition: 0, Committed: 10, End: 10}, {Topic: "orders", Partition: 1, Committed: 10, End: 10}})
	if err := groupadmin.Commit(ctx, adm, raced, time.Now()); !errors.Is(err, groupadmin.ErrMemberJoined) || !strings.Contains(err.Error(), "nothing was moved") {
		t.Fatalf("a commit racing a member: %v", err)
	}
	stopPoll()
	<-polled
	member.Close()
	if c := committedAt(); c[0] != 10 || c[1] != 10 {
		t.Fatalf("the refused seek moved the offsets: %v", c)
	}

	// Executed: the group reads exactly the records the plan named again. The member that just
	// left may still be leaving: wait until the seek is taken.
	checkfor.Eventually(t, 15*time.Second, "the shift is executed", func() error {
		code, plan, stderr = seek("--shift", "-3", "--yes")
		if code != exitOK || !plan.Summary.Done || plan.Summary.Reread != 6 {
			return fmt.Errorf("exit %d %+v: %s", code, plan.Summary, stderr)
		}
		return nil
	})
	if c := committedAt(); c[0] != 7 || c[1] != 7 {
		t.Fatalf("after the shift: committed %v", c)
	}
	// The shift's commit is acknowledged once the log holds it: from here on, the log's history
	// says 7 until the group commits again.
	afterShift := time.Now()
	if got := consumeGroup(t, seeds, "g", "orders", 6); !slices.Equal(got, span(parts, 7, 10)) {
		t.Fatalf("after the shift the group read %v, want offsets 7..9 of both partitions", got)
	}
	code, plan, stderr = seek("--to-time", base.Add(5*time.Minute).Format(time.RFC3339), "--yes")
	if code != exitOK || plan.Summary.Reread != 10 {
		t.Fatalf("to-time: exit %d %+v %s", code, plan.Summary, stderr)
	}
	if got := consumeGroup(t, seeds, "g", "orders", 10); !slices.Equal(got, span(parts, 5, 10)) {
		t.Fatalf("after the seek to a time the group read %v, want offsets 5..9 of both partitions", got)
	}

	// The offsets as they stood just after the shift, from the log's history.
	code, plan, stderr = seek("--to-commit-at", afterShift.Format(time.RFC3339Nano), "--yes")
	if code != exitOK || len(plan.Data) != 2 || plan.Data[0].New != 7 || plan.Data[1].New != 7 || *plan.Data[0].Committed != 10 || plan.Summary.Reread != 6 {
		t.Fatalf("to-commit-at: exit %d %+v %s", code, plan, stderr)
	}
	if c := committedAt(); c[0] != 7 || c[1] != 7 {
		t.Fatalf("after --to-commit-at: committed %v", c)
	}

	// --undo puts back what the newest seek replaced (10), then walks back through the older
	// seeks, newest first (the seek to a time and the shift, which both replaced 10), then has
	// none left.
	code, plan, stderr = seek("--undo", "--dry-run")
	if code != exitOK || plan.Data[0].New != 10 || plan.Data[1].New != 10 || plan.Summary.Skip != 6 || plan.Summary.Done {
		t.Fatalf("undo dry run: exit %d %+v %s", code, plan, stderr)
	}
	if c := committedAt(); c[0] != 7 || c[1] != 7 {
		t.Fatalf("the undo's dry run moved the offsets: %v", c)
	}
	var undone []time.Time // the ids of the seeks undone, which are their times
	for i := range 3 {
		code, plan, stderr = seek("--undo", "--yes")
		id, _ := strings.CutSuffix(strings.TrimPrefix(plan.Summary.Target, "the offsets seek "), " replaced")
		at, err := time.Parse(time.RFC3339Nano, id)
		if code != exitOK || err != nil || !plan.Summary.Done || plan.Data[0].New != 10 || len(undone) > 0 && !at.Before(undone[len(undone)-1]) {
			t.Fatalf("undo %d: exit %d %+v %v %s (undone before: %v)", i, code, plan, err, stderr, undone)
		}
		undone = append(undone, at)
		if c := committedAt(); c[0] != 10 || c[1] != 10 {
			t.Fatalf("after undo %d: committed %v", i, c)
		}
	}
	if code, _, stderr := runCLI(t, env, "group", "seek", "g", "--undo", "--yes"); code != exitFailed || !strings.Contains(stderr, "the coordinator log holds no seek of group g left to undo") {
		t.Fatalf("a fourth undo: exit %d %s", code, stderr)
	}
}

// A gateway that announces an address the operator cannot reach is named with that address in
// the error, instead of one line about the default address.
func TestUnreachableAnnouncedAddressIsSaidPerNode(t *testing.T) {
	closed := freeport.Addr(t)
	srv, _ := testfleet.Start(t, 1, func(_ int, cfg *gateway.Config) { cfg.AdvertisedAddr, cfg.Brokers = closed, nil })
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + srv.Addr, "XDG_CONFIG_HOME=" + t.TempDir(), "IGGY_KAFKA_REQUEST_TIMEOUT=2s"}
	checkfor.Eventually(t, 20*time.Second, "claims --group names node 1 at its announced address", func() error {
		code, out, stderr := runCLI(t, env, "claims", "--group", "g")
		if code != exitFailed || out != "" || !strings.Contains(stderr, "asked the gateways the log announces:\n  node 1 at "+closed+": ") ||
			!strings.Contains(stderr, "--kafka-bootstrap (IGGY_KAFKA_KAFKA_BOOTSTRAP) sets others") || strings.Contains(stderr, "localhost:9092") {
			return fmt.Errorf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
		}
		return nil
	})
	// The variable (as the flag and the config key) wins over the announcements.
	other := freeport.Addr(t)
	code, _, stderr := runCLI(t, append(env, "IGGY_KAFKA_KAFKA_BOOTSTRAP="+other), "group", "list")
	if code != exitFailed || !strings.Contains(stderr, "asked:\n  "+other+": ") || strings.Contains(stderr, closed) {
		t.Fatalf("with IGGY_KAFKA_KAFKA_BOOTSTRAP: exit %d\n%s", code, stderr)
	}
}
