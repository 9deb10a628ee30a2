package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// The outputs under testdata/perftest are what kafka-producer-perf-test,
// kafka-consumer-perf-test and the broker (4.4.0) printed against an
// Apache Kafka node started as the runner starts it.

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "perftest", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseProducerPerf(t *testing.T) {
	full := readTestdata(t, "producer-perf-test.txt")
	lines := strings.Split(strings.TrimSpace(full), "\n")
	progress := strings.Join(lines[:len(lines)-1], "\n")
	for _, tc := range []struct {
		name, out string
		want      ProducerPerf
		err       string
	}{
		{name: "progress then summary", out: full, want: ProducerPerf{Records: 300000, RecordsPerSec: 25913.449080, MiBPerSec: 25.31,
			AvgMs: 1045.01, MaxMs: 1905, P50: 1037, P95: 1713, P99: 1835, P999: 1898}},
		{name: "summary alone", out: lines[len(lines)-1] + "\n", want: ProducerPerf{Records: 300000, RecordsPerSec: 25913.449080, MiBPerSec: 25.31,
			AvgMs: 1045.01, MaxMs: 1905, P50: 1037, P95: 1713, P99: 1835, P999: 1898}},
		{name: "progress lines only", out: progress, err: "no summary line"},
		{name: "nothing", out: "", err: "no summary line"},
		{name: "a field renamed", out: strings.Replace(lines[len(lines)-1], "ms 95th", "ms 90th", 1), err: `does not end in " ms 95th"`},
		{name: "a number garbled", out: strings.Replace(lines[len(lines)-1], "25.31 MB/sec", "25,31 MB/sec", 1), err: "invalid syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProducerPerf(strings.NewReader(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseConsumerPerf(t *testing.T) {
	full := readTestdata(t, "consumer-perf-test.txt")
	short := readTestdata(t, "consumer-perf-test-short.txt")
	header, _, _ := strings.Cut(full, "\n")
	for _, tc := range []struct {
		name, out string
		want      ConsumerPerf
		err       string
	}{
		{name: "header and figures", out: full, want: ConsumerPerf{MiB: 48.8281, MiBPerSec: 23.9471, Records: 50000, RecordsPerSec: 24521.8244,
			RebalanceMs: 1448, FetchMs: 591, FetchMiBPerSec: 82.6195, FetchRecordsPerSec: 84602.3689}},
		// Asked for more than the topic held: it says so and reports what it read.
		{name: "timed out short of the count", out: short, want: ConsumerPerf{MiB: 292.9688, MiBPerSec: 47.4520, Records: 300000,
			RecordsPerSec: 48590.8649, RebalanceMs: 716, FetchMs: 5458, FetchMiBPerSec: 53.6769, FetchRecordsPerSec: 54965.1887}},
		{name: "header only", out: header + "\n", err: "no figures line"},
		{name: "figures without a header", out: strings.SplitN(full, "\n", 2)[1], err: "no figures line"},
		{name: "a column missing", out: strings.Replace(full, "fetch.time.ms", "fetch.ms", 1), err: "lacks"},
		{name: "a figure garbled", out: strings.Replace(full, "23.9471", "23.94x", 1), err: "MB.sec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConsumerPerf(strings.NewReader(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestKafkaFlush: the flush settings come from the broker's own
// "KafkaConfig values" block, and a log without one is an error, not
// an empty report.
func TestKafkaFlush(t *testing.T) {
	log := readTestdata(t, "kafka-server.log")
	got, err := KafkaFlush(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"log.flush.interval.messages": "9223372036854775807", "log.flush.interval.ms": "null",
		"log.flush.scheduler.interval.ms": "9223372036854775807"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	set := strings.Replace(log, "log.flush.interval.ms = null", "log.flush.interval.ms = 1000", 1)
	if got, err := KafkaFlush(strings.NewReader(set)); err != nil || got["log.flush.interval.ms"] != "1000" {
		t.Errorf("a broker with log.flush.interval.ms=1000: %v, %v", got, err)
	}
	// The settings after the block are not the broker's.
	_, after, _ := strings.Cut(log, "KafkaConfig values:")
	if _, err := KafkaFlush(strings.NewReader(after)); err == nil {
		t.Error("a log without the KafkaConfig block gave flush settings")
	}
}

// TestPayloadFile: every line of a payload file is exactly one value of
// PerfSize bytes, distinct from the others; random lines are printable
// text (the tool reads the file as UTF-8) and JSON-like lines are JSON.
func TestPayloadFile(t *testing.T) {
	for _, kind := range []string{workload.Random, workload.JSON} {
		path := filepath.Join(t.TempDir(), kind+".txt")
		if err := writePayloadFile(path, kind, PerfSize, 1500); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if len(line) != PerfSize || seen[line] {
				t.Fatalf("%s line %d: %d bytes, seen before %v", kind, len(seen), len(line), seen[line])
			}
			seen[line] = true
			switch kind {
			case workload.Random:
				for _, c := range []byte(line) {
					if c < '+' || c > 'z' {
						t.Fatalf("random line holds byte %#x", c)
					}
				}
			case workload.JSON:
				if !json.Valid([]byte(line)) {
					t.Fatalf("json line is not JSON: %s", line)
				}
			}
		}
		if len(seen) != 1500 {
			t.Errorf("%s: %d lines, want 1500", kind, len(seen))
		}
	}
	if err := writePayloadFile(filepath.Join(t.TempDir(), "x"), "zeros", PerfSize, 10); err == nil {
		t.Error("a payload file of an unknown kind was written")
	}
}

// FuzzPerfOutput: whatever a tool or the broker prints, the parsers
// return figures or an error, never panic, and figures they return hold
// no negative count.
func FuzzPerfOutput(f *testing.F) {
	for _, name := range []string{"producer-perf-test.txt", "consumer-perf-test.txt", "consumer-perf-test-short.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "perftest", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, out string) {
		if p, err := ParseProducerPerf(strings.NewReader(out)); err == nil && p.Records < 0 && !strings.Contains(out, "-") {
			t.Errorf("producer figures %+v from input without a minus sign", p)
		}
		if c, err := ParseConsumerPerf(strings.NewReader(out)); err == nil && c.Records < 0 && !strings.Contains(out, "-") {
			t.Errorf("consumer figures %+v from input without a minus sign", c)
		}
		_, _ = KafkaFlush(strings.NewReader(out))
	})
}
