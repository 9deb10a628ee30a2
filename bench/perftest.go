package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// Kafka's own load tools in the benchmark: kafka-producer-perf-test fills
// a fresh topic with PerfSize-byte records drawn from a payload file, then
// kafka-consumer-perf-test reads them back in a consumer group of its own,
// each tool a JVM of its own run as its script runs it (org.apache.kafka.
// tools.ProducerPerformance and ConsumerPerformance, -Xmx512M), with the
// clients' defaults: acks=all, idempotence, linger.ms 5, batch.size 16 KiB,
// no compression. The runner parses what they print (ParseProducerPerf,
// ParseConsumerPerf) and reads the broker's CPU around each.

// PerfSize is the record size of the perf-test runs.
const PerfSize = 1024

// PerfSystems are the systems the perf tools run against.
var PerfSystems = []string{Gateway, Kafka}

// ProducerPerf is the summary line of kafka-producer-perf-test. Its MB are
// MiB (2^20 bytes), as the tool counts them.
type ProducerPerf struct {
	Records                  int64
	RecordsPerSec, MiBPerSec float64
	AvgMs, MaxMs             float64
	P50, P95, P99, P999      float64 // ms
}

// ConsumerPerf is the figures line of kafka-consumer-perf-test (its MB are
// MiB): the whole run, from creating the consumer to the last record, and
// the fetch part, the run less the group's join (RebalanceMs).
type ConsumerPerf struct {
	MiB, MiBPerSec                     float64
	Records                            int64
	RecordsPerSec                      float64
	RebalanceMs, FetchMs               float64
	FetchMiBPerSec, FetchRecordsPerSec float64
}

// PerfRun is one round's producer and consumer runs against one system,
// with the broker's CPU seconds in each.
type PerfRun struct {
	Produce                    ProducerPerf
	Consume                    ConsumerPerf
	ProduceCPU, ConsumeCPU     float64 // broker CPU seconds while the tool ran, JVM start included
	ProduceBytes, ConsumeBytes int64
}

// ParseProducerPerf reads kafka-producer-perf-test's output: progress
// lines every reporting interval, then the summary, the one line that
// gives percentiles ("N records sent, R records/sec (M MB/sec), A ms avg
// latency, X ms max latency, P ms 50th, P ms 95th, P ms 99th, P ms
// 99.9th."). Lines about the payload file come before them.
func ParseProducerPerf(out io.Reader) (ProducerPerf, error) {
	var p ProducerPerf
	found := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.Contains(line, " records sent, ") || !strings.HasSuffix(line, "99.9th.") {
			continue
		}
		// "(12.06 MB/sec)" is a field of its own once the brackets go.
		fields := strings.Split(strings.NewReplacer(" (", ", ", ")", "").Replace(strings.TrimSuffix(line, ".")), ", ")
		want := []struct {
			suffix string
			dst    *float64
		}{
			{" records/sec", &p.RecordsPerSec}, {" MB/sec", &p.MiBPerSec}, {" ms avg latency", &p.AvgMs},
			{" ms max latency", &p.MaxMs}, {" ms 50th", &p.P50}, {" ms 95th", &p.P95}, {" ms 99th", &p.P99}, {" ms 99.9th", &p.P999},
		}
		if len(fields) != len(want)+1 {
			return p, fmt.Errorf("bench: producer perf summary has %d fields, want %d: %q", len(fields), len(want)+1, line)
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(fields[0], " records sent"), 10, 64)
		if err != nil {
			return p, fmt.Errorf("bench: producer perf summary %q: %w", line, err)
		}
		p.Records = n
		for i, w := range want {
			num, ok := strings.CutSuffix(fields[i+1], w.suffix)
			if !ok {
				return p, fmt.Errorf("bench: producer perf summary field %q does not end in %q", fields[i+1], w.suffix)
			}
			if *w.dst, err = strconv.ParseFloat(num, 64); err != nil {
				return p, fmt.Errorf("bench: producer perf summary field %q: %w", fields[i+1], err)
			}
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !found {
		return p, errors.New("bench: no summary line in kafka-producer-perf-test's output")
	}
	return p, nil
}

// consumerColumns are the columns of kafka-consumer-perf-test that the
// runner reads, by header name.
var consumerColumns = []string{"data.consumed.in.MB", "MB.sec", "data.consumed.in.nMsg", "nMsg.sec",
	"rebalance.time.ms", "fetch.time.ms", "fetch.MB.sec", "fetch.nMsg.sec"}

// ParseConsumerPerf reads kafka-consumer-perf-test's output: a header
// line of comma-separated column names, then one line of values (without
// --show-detailed-stats). A warning that it stopped before the count it
// was given may stand between them; the caller compares Records.
func ParseConsumerPerf(out io.Reader) (ConsumerPerf, error) {
	var c ConsumerPerf
	var header []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		cols := strings.Split(strings.TrimSpace(sc.Text()), ", ")
		if header == nil {
			if len(cols) > 1 && cols[0] == "start.time" {
				header = cols
			}
			continue
		}
		if len(cols) != len(header) {
			continue // a warning line
		}
		vals := map[string]float64{}
		for i, name := range header {
			for _, want := range consumerColumns {
				if name == want {
					v, err := strconv.ParseFloat(cols[i], 64)
					if err != nil {
						return c, fmt.Errorf("bench: consumer perf column %s: %w", name, err)
					}
					vals[name] = v
				}
			}
		}
		if len(vals) != len(consumerColumns) {
			return c, fmt.Errorf("bench: consumer perf header %q lacks some of %q", strings.Join(header, ", "), consumerColumns)
		}
		c = ConsumerPerf{MiB: vals["data.consumed.in.MB"], MiBPerSec: vals["MB.sec"], Records: int64(vals["data.consumed.in.nMsg"]),
			RecordsPerSec: vals["nMsg.sec"], RebalanceMs: vals["rebalance.time.ms"], FetchMs: vals["fetch.time.ms"],
			FetchMiBPerSec: vals["fetch.MB.sec"], FetchRecordsPerSec: vals["fetch.nMsg.sec"]}
		return c, nil
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	return c, errors.New("bench: no figures line in kafka-consumer-perf-test's output")
}

// writePayloadFile writes the payload file of a kind for
// kafka-producer-perf-test: lines of exactly size bytes, which the tool
// splits at newlines and draws from at random. The tool reads the file as
// UTF-8 text, so random values are random printable characters (64 of
// them, six bits a byte: no repeats for a compressor to find) rather than
// random bytes; JSON-like values are the workload pool's own.
func writePayloadFile(path, kind string, size, lines int) error {
	var b bytes.Buffer
	switch kind {
	case workload.Random:
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		rng := rand.New(rand.NewPCG(1, uint64(size)))
		for range lines {
			for range size {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			b.WriteByte('\n')
		}
	case workload.JSON:
		pool, err := workload.NewPool(kind, size, size*lines, 1)
		if err != nil {
			return err
		}
		for i := range lines {
			v := pool.Value(i)
			if bytes.IndexByte(v, '\n') >= 0 {
				return fmt.Errorf("bench: a %s value holds a newline, which would split it in the payload file", kind)
			}
			b.Write(v)
			b.WriteByte('\n')
		}
	default:
		return fmt.Errorf("bench: no payload file for kind %q", kind)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// perfLines is how many values a payload file holds: as many as the pools,
// so that a 16 KiB batch rarely holds the same value twice.
func perfLines(poolBytes int) int { return max(poolBytes/PerfSize, 1024) }

// runPerf runs both tools against one broker: a fresh topic of partitions
// partitions, records records from the payload file, read back to the
// last; brokerPID is the process whose CPU each run is charged.
func runPerf(ctx context.Context, j *kafkaJars, addr string, brokerPID int, topic, payload string, records, partitions int, timeout time.Duration) (PerfRun, error) {
	var run PerfRun
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return run, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return run, fmt.Errorf("create topic %s: %w", topic, err)
	}
	defer func() { _, _ = adm.DeleteTopics(context.WithoutCancel(ctx), topic) }()

	n := strconv.Itoa(records)
	out, cpu, err := runTool(ctx, j, brokerPID, timeout, "org.apache.kafka.tools.ProducerPerformance",
		"--bootstrap-server", addr, "--topic", topic, "--num-records", n, "--throughput", "-1", "--payload-file", payload)
	if err != nil {
		return run, fmt.Errorf("kafka-producer-perf-test: %w", err)
	}
	if run.Produce, err = ParseProducerPerf(bytes.NewReader(out)); err != nil {
		return run, err
	}
	if run.Produce.Records != int64(records) {
		return run, fmt.Errorf("kafka-producer-perf-test sent %d records, want %d", run.Produce.Records, records)
	}
	run.ProduceCPU, run.ProduceBytes = cpu, int64(records)*PerfSize

	out, cpu, err = runTool(ctx, j, brokerPID, timeout, "org.apache.kafka.tools.ConsumerPerformance",
		"--bootstrap-server", addr, "--topic", topic, "--num-records", n, "--timeout", "30000")
	if err != nil {
		return run, fmt.Errorf("kafka-consumer-perf-test: %w", err)
	}
	if run.Consume, err = ParseConsumerPerf(bytes.NewReader(out)); err != nil {
		return run, err
	}
	if run.Consume.Records != int64(records) {
		return run, fmt.Errorf("kafka-consumer-perf-test read %d records, want %d:\n%s", run.Consume.Records, records, out)
	}
	run.ConsumeCPU, run.ConsumeBytes = cpu, int64(records)*PerfSize
	return run, nil
}

// runTool runs one of Kafka's tools in a JVM of its own and returns its
// standard output and the broker's CPU seconds meanwhile. Its log goes to
// standard error at WARN, and into the error when it fails.
func runTool(ctx context.Context, j *kafkaJars, brokerPID int, timeout time.Duration, class string, args ...string) ([]byte, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.java, append([]string{toolHeap, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", j.classpath, class}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before, err := workload.ProcCPU(brokerPID)
	if err != nil {
		return nil, 0, err
	}
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w\n%s\n%s", filepath.Base(class), err, lastLines(stdout.String(), 10), lastLines(stderr.String(), 30))
	}
	after, err := workload.ProcCPU(brokerPID)
	if err != nil {
		return nil, 0, err
	}
	return stdout.Bytes(), (after - before).Seconds(), nil
}
