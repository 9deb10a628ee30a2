package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench/child"
)

// Apache Kafka in the benchmark: the broker users would otherwise run, one
// KRaft node (broker and controller in one JVM) started per round the way
// kafka-storage.sh and kafka-server-start.sh start it, from the jars of
// bench/kafka/pom.xml. Its settings are those of the server.properties that
// Kafka ships for a single combined node, with three exceptions, all
// written in kafkaProperties: the addresses (free loopback ports), the data
// directory (in the round's directory, beside the gateway's store) and
// num.partitions (the runner's partitions, as serve gets
// --default-partitions).

// KafkaHeap is the broker's heap, -Xms and -Xmx: what kafka-server-start.sh
// gives it unless KAFKA_HEAP_OPTS says otherwise.
const KafkaHeap = "1g"

// kafkaJVMOptions are kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS, which
// every broker started by Kafka's scripts runs with.
var kafkaJVMOptions = []string{"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"}

// toolHeap is the heap kafka-producer-perf-test.sh and
// kafka-consumer-perf-test.sh give the tools.
const toolHeap = "-Xmx512M"

// kafkaFlushKeys are the broker's settings that decide when it fsyncs its
// log. The runner sets none of them; it reads the values the broker logs at
// start (KafkaFlush) so that the report states them.
var kafkaFlushKeys = []string{"log.flush.interval.messages", "log.flush.interval.ms", "log.flush.scheduler.interval.ms"}

// kafkaJars is Apache Kafka's classpath, resolved once per run.
type kafkaJars struct {
	java      string // the java binary
	classpath string
	version   string // of kafka_2.13, as the pom names it
}

// resolveKafka finds java (17 or later: Kafka 4 brokers need it) and the
// classpath of bench/kafka/pom.xml. Maven resolves it once (the jars stay
// in ~/.m2); the classpath is kept in the user cache directory under the
// pom's hash and resolved again when a jar it names is gone.
func resolveKafka(ctx context.Context, repo string, logf func(string, ...any)) (*kafkaJars, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("bench: Apache Kafka needs java 17 or later on PATH (Debian: openjdk-17-jdk-headless, and maven); -kafka=false leaves Kafka out")
	}
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("bench: java -version: %w\n%s", err, out)
	}
	if major := javaMajor(string(out)); major < 17 {
		return nil, fmt.Errorf("bench: Apache Kafka 4 needs java 17 or later; java -version says %q", firstLine(string(out)))
	}
	pomPath := filepath.Join(repo, "bench", "kafka", "pom.xml")
	pom, err := os.ReadFile(pomPath)
	if err != nil {
		return nil, err
	}
	j := &kafkaJars{java: java, version: pomVersion(pom)}
	sum := sha256.Sum256(pom)
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = os.TempDir()
	}
	cached := filepath.Join(cacheDir, "iggy-kafka", "bench-kafka-"+hex.EncodeToString(sum[:6])+".classpath")
	if b, err := os.ReadFile(cached); err == nil && jarsExist(string(b)) {
		j.classpath = strings.TrimSpace(string(b))
		return j, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, errors.New("bench: Apache Kafka's jars come from Maven Central through mvn, which is not on PATH (Debian: maven); -kafka=false leaves Kafka out")
	}
	logf("resolving Apache Kafka %s with Maven (cached in ~/.m2)", j.version)
	// In a copy, so that the checkout gets nothing Maven writes.
	tmp, err := os.MkdirTemp("", "iggy-kafka-bench-mvn-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "pom.xml"), pom, 0o644); err != nil {
		return nil, err
	}
	cpFile := filepath.Join(tmp, "classpath.txt")
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "dependency:build-classpath", "-Dmdep.outputFile="+cpFile)
	cmd.Dir = tmp
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: mvn dependency:build-classpath of %s: %w\n%s", pomPath, err, lastLines(string(msg), 30))
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	j.classpath = strings.TrimSpace(string(b))
	if !jarsExist(j.classpath) {
		return nil, fmt.Errorf("bench: Maven gave a classpath with missing jars: %s", j.classpath)
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err == nil {
		_ = os.WriteFile(cached, []byte(j.classpath+"\n"), 0o644)
	}
	return j, nil
}

func jarsExist(cp string) bool {
	cp = strings.TrimSpace(cp)
	if cp == "" {
		return false
	}
	for _, jar := range filepath.SplitList(cp) {
		if _, err := os.Stat(jar); err != nil {
			return false
		}
	}
	return true
}

var javaVersion = regexp.MustCompile(`version "(?:1\.)?(\d+)`)

// javaMajor is the major version in java -version's output; zero when it
// names none.
func javaMajor(out string) int {
	m := javaVersion.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var kafkaVersionProp = regexp.MustCompile(`<kafka\.version>([^<]+)</kafka\.version>`)

func pomVersion(pom []byte) string {
	if m := kafkaVersionProp.FindSubmatch(pom); m != nil {
		return string(m[1])
	}
	return "4"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// kafkaProperties is the broker's server.properties: Kafka's shipped
// config/server.properties for one combined KRaft node, on the given
// addresses, with its log in logDir and partitions partitions per topic
// created without a count. group.initial.rebalance.delay.ms is 0 as in the
// file Kafka ships (and its container image): the default 3 s would be
// charged to every consumer group phase of a one-node broker. Nothing about
// flushing is set: the log is fsynced as Kafka does by default (on segment
// roll and shutdown, the rest left to the page cache, durability coming
// from replication), as serve runs with --fsync never.
func kafkaProperties(brokerAddr, controllerAddr, logDir string, partitions int) string {
	return fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=%[2]s
listeners=PLAINTEXT://%[1]s,CONTROLLER://%[2]s
advertised.listeners=PLAINTEXT://%[1]s,CONTROLLER://%[2]s
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=%[3]s
num.partitions=%[4]d
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`, brokerAddr, controllerAddr, logDir, partitions)
}

// kafkaProc is a running Apache Kafka broker.
type kafkaProc struct {
	*proc
	dir string // config, data and server.log
}

// startKafka formats a fresh log directory under dir and starts the broker
// there, returning once it has created (and deleted) a topic: accepting a
// connection is not enough, a KRaft broker accepts before it is unfenced.
func startKafka(ctx context.Context, j *kafkaJars, dir string, partitions int) (*kafkaProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(kafkaProperties(addrs[0], addrs[1], filepath.Join(dir, "data"), partitions)), 0o644); err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	format := exec.CommandContext(ctx, j.java, "-cp", j.classpath, "kafka.tools.StorageTool", "format", "--standalone",
		"--cluster-id", base64.RawURLEncoding.EncodeToString(id), "--config", props)
	if msg, err := format.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: kafka-storage format: %w\n%s", err, lastLines(string(msg), 20))
	}
	args := append([]string{"-Xms" + KafkaHeap, "-Xmx" + KafkaHeap}, kafkaJVMOptions...)
	args = append(args, "-Dorg.slf4j.simpleLogger.logFile="+filepath.Join(dir, "server.log"),
		"-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", j.classpath, "kafka.Kafka", props)
	p := &proc{cmd: exec.CommandContext(ctx, j.java, args...), kafkaAddr: addrs[0], stderr: new(bytes.Buffer)}
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	if err := start(p); err != nil {
		return nil, err
	}
	k := &kafkaProc{proc: p, dir: dir}
	if err := waitKafkaReady(ctx, k, 90*time.Second); err != nil {
		_ = p.stop()
		return nil, err
	}
	return k, nil
}

// waitKafkaReady creates and deletes a topic on the broker until that
// works, the broker exits, or the timeout passes.
func waitKafkaReady(ctx context.Context, k *kafkaProc, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.kafkaAddr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		last = func() error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			resp, err := adm.CreateTopic(ctx, 1, 1, nil, "bench-ready")
			if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
				err = resp.Err
			}
			if err != nil {
				return err
			}
			_, err = adm.DeleteTopics(ctx, "bench-ready")
			return err
		}()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: Apache Kafka not ready on %s after %v: %v\n%s\n%s", k.kafkaAddr, timeout, last, k.stderr, k.logTail(30))
		}
		select {
		case err := <-k.done:
			k.done <- err
			return fmt.Errorf("bench: Apache Kafka exited: %v\n%s\n%s", err, k.stderr, k.logTail(30))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (k *kafkaProc) logTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(k.dir, "server.log"))
	return lastLines(string(b), n)
}

// flush is the broker's log flush settings as it logged them at start.
func (k *kafkaProc) flush() (map[string]string, error) {
	f, err := os.Open(filepath.Join(k.dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return KafkaFlush(f)
}

// KafkaFlush reads the log flush settings (kafkaFlushKeys) from the first
// "KafkaConfig values:" block of a broker's log, as Kafka's AbstractConfig
// prints it: one tab-indented "key = value" line per setting.
func KafkaFlush(log io.Reader) (map[string]string, error) {
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	in := false
	out := map[string]string{}
	for sc.Scan() {
		line := sc.Text()
		if !in {
			in = strings.HasSuffix(strings.TrimSpace(line), "KafkaConfig values:")
			continue
		}
		if !strings.HasPrefix(line, "\t") {
			break // the block ends at the first line that is not a setting
		}
		key, val, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok {
			continue
		}
		for _, want := range kafkaFlushKeys {
			if key == want {
				out[key] = val
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != len(kafkaFlushKeys) {
		return out, fmt.Errorf("bench: the broker's log has %d of the %d log flush settings (no KafkaConfig values block?)", len(out), len(kafkaFlushKeys))
	}
	return out, nil
}
