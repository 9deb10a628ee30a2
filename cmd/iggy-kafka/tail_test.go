package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
	"github.com/iggy-kafka/iggy-kafka/tail"
)

// tail prints what was produced, each key, header and value as JSON, text or hex, cut in text
// and whole in JSON; from an offset not yet written it waits for the record and follows it.
func TestTailEndToEnd(t *testing.T) {
	srv, gws := testfleet.Start(t, 2, nil)
	seeds := []string{gws[0].Addr().String(), gws[1].Addr().String()}
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + srv.Addr, "XDG_CONFIG_HOME=" + t.TempDir(), "IGGY_KAFKA_REQUEST_TIMEOUT=5s"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("events"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if r, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	big := strings.Repeat("x", 5000)
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	for _, r := range []*kgo.Record{
		{Partition: 0, Key: []byte("k1"), Value: []byte(`{"id":1,"ok":true}`), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}, Timestamp: at},
		{Partition: 0, Key: []byte{0xff, 0x00}, Value: []byte{0xde, 0xad, 0xbe, 0xef}, Timestamp: at.Add(time.Second)},
		{Partition: 0, Key: []byte("k3"), Value: []byte(big), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("0123456789")}}, Timestamp: at.Add(2 * time.Second)},
		{Partition: 1, Value: nil, Timestamp: at.Add(3 * time.Second)},
	} {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	code, out, stderr := runCLI(t, env, "tail", "events", "--from", "beginning", "--no-follow", "-o", "json")
	if code != exitOK {
		t.Fatalf("tail -o json: exit %d %s", code, stderr)
	}
	got := map[string]tail.Record{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r tail.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = r
	}
	if len(got) != 4 {
		t.Fatalf("%d records:\n%s", len(got), out)
	}
	if r := got["0/0"]; r.Value != `{"id":1,"ok":true}` || r.ValueEncoding != tail.EncJSON || r.Key != "k1" || r.KeyEncoding != tail.EncText ||
		len(r.Headers) != 1 || r.Headers[0] != (tail.Header{Key: "trace", Value: "abc", Encoding: tail.EncText}) || !r.Timestamp.Equal(at) {
		t.Errorf("0/0: %+v", r)
	}
	if r := got["0/1"]; r.Value != "deadbeef" || r.ValueEncoding != tail.EncHex || r.Key != "ff00" || r.KeyEncoding != tail.EncHex {
		t.Errorf("0/1: %+v", r)
	}
	if r := got["0/2"]; r.Value != big || r.ValueBytes != 5000 {
		t.Errorf("0/2: the value was cut in JSON: %d characters", len(r.Value))
	}
	if r := got["1/0"]; r.ValueEncoding != tail.EncNull || r.KeyEncoding != tail.EncNull {
		t.Errorf("1/0: %+v", r)
	}

	// Text: one partition, from a time, the big value cut with its size said.
	code, out, _ = runCLI(t, env, "tail", "events:0", "--from", at.Add(time.Second).Format(time.RFC3339), "--no-follow")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "PARTITION  OFFSET  TIME") ||
		!strings.Contains(lines[1], "deadbeef") || !strings.Contains(lines[2], "… (5000 bytes)") || len(lines[2]) > 200 {
		t.Fatalf("text from a time: exit %d\n%s", code, out)
	}
	if v := strings.Index(lines[0], "VALUE"); v < 0 || !strings.HasPrefix(lines[1][v:], "deadbeef") || !strings.HasPrefix(lines[2][v:], "xxx") {
		t.Fatalf("the columns of one fetch are not aligned:\n%s", out)
	}

	// Following from an offset not written yet: the record appears once produced.
	done := make(chan string, 1)
	go func() {
		code, out, stderr := runCLI(t, env, "tail", "events:1", "--from", "1", "--count", "1", "-o", "json")
		done <- fmt.Sprintf("%d %s%s", code, out, stderr)
	}()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("later")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if !strings.HasPrefix(res, "0 ") || !strings.Contains(res, `"offset":1`) || !strings.Contains(res, `"value":"later"`) {
			t.Fatalf("follow: %s", res)
		}
	case <-ctx.Done():
		t.Fatal("the follower never printed the record")
	}

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"tail", "nope", "--no-follow"}, exitFailed, "topic nope does not exist"},
		{[]string{"tail", "events:5", "--no-follow"}, exitFailed, "topic events has no partition 5 (it has 2)"},
		{[]string{"tail", "events", "--from", "yesterday"}, exitUsage, "--from:"},
		{[]string{"tail", "events:x"}, exitUsage, `partition "x" is not a partition number`},
		{[]string{"tail"}, exitUsage, "usage: iggy-kafka tail TOPIC"},
	} {
		code, out, stderr := runCLI(t, env, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d out %q stderr %q, want %d saying %q", tc.args, code, out, stderr, tc.code, tc.says)
		}
	}
}
