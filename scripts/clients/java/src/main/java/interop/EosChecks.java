package interop;

import static interop.JavaInterop.expect;
import static interop.JavaInterop.waitFor;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Kafka Streams with {@code processing.guarantee=exactly_once_v2} against a gateway started with
 * {@code --transactions}: the word count of {@link StreamsChecks} as an application in a JVM of
 * its own ({@link WordCountApp}), every store update written out. Read with read_committed, the
 * counts of each word in the output are exactly 1, 2, ... n, n its true count: a count written
 * twice, or one missing, shows. Then more lines are written while the application is killed with
 * SIGKILL mid-run and started again on the same state directory, and the counts are still
 * exactly 1 ... n.
 */
final class EosChecks {
    private static final String APP = "java-wordcount-eos";
    private static final String INPUT = "eos-lines";
    private static final String OUTPUT = "eos-counts";
    private static final int LINES = 1000; // per half

    private final JavaInterop t;
    private final Map<String, Long> truth = new TreeMap<>();
    private final List<String> states = Collections.synchronizedList(new ArrayList<>());
    /** Each word's counts in the output as read so far, read_committed. */
    private final Map<String, List<Long>> counts = new TreeMap<>();
    private Path stateDir;
    private Path log;

    EosChecks(JavaInterop t) {
        this.t = t;
    }

    void run(Admin admin) throws Exception {
        stateDir = Files.createTempDirectory("streams-eos-state");
        log = stateDir.resolveSibling(stateDir.getFileName() + ".log");
        Process app = null;
        Properties cp = t.consumerProps(null, null);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, Long> out = new KafkaConsumer<>(cp)) {
            JavaInterop.createTopic(admin, INPUT, 3);
            JavaInterop.createTopic(admin, OUTPUT, 3);
            List<TopicPartition> parts = List.of(new TopicPartition(OUTPUT, 0), new TopicPartition(OUTPUT, 1), new TopicPartition(OUTPUT, 2));
            out.assign(parts);
            out.seekToBeginning(parts);
            produceLines(0, LINES, false);
            long t0 = System.nanoTime();
            app = start();
            Process first = app;
            t.check("streams exactly_once_v2: " + LINES + " lines counted; each word's counts in the output, read_committed, are exactly 1..n", () -> {
                waitFor("the application RUNNING " + states + "\n" + tail(), Duration.ofSeconds(60), () -> states.contains("RUNNING") || !first.isAlive());
                expect(first.isAlive(), "the application exited: %s\n%s", states, tail());
                System.out.printf("      RUNNING after %.1f s%n", (System.nanoTime() - t0) / 1e9);
                expectExact(out);
                System.out.printf("      counted exactly after %.1f s%n", (System.nanoTime() - t0) / 1e9);
            });
            int before = updates();
            Process[] running = {app};
            t.check("streams exactly_once_v2: SIGKILLed mid-run and started again on its state directory; the counts are still exactly 1..n", () -> {
                List<Throwable> writerErrors = Collections.synchronizedList(new ArrayList<>());
                Thread writer = new Thread(() -> {
                    try {
                        produceLines(LINES, 2 * LINES, true);
                    } catch (Exception e) {
                        writerErrors.add(e);
                    }
                }, "eos-writer");
                writer.start();
                try {
                    // Killed once it has committed some of the second half.
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (updates() < before + 200) {
                        expect(System.nanoTime() < deadline, "no progress on the second half within 60 s: %d updates\n%s", updates(), tail());
                        poll(out);
                    }
                    running[0].destroyForcibly(); // SIGKILL
                    expect(running[0].waitFor(30, TimeUnit.SECONDS), "the killed application did not exit");
                    int atKill = updates();
                    int total = (int) (5L * 2 * LINES);
                    System.out.printf("      killed with SIGKILL after %d of %d updates%n", atKill, total);
                    states.clear();
                    long t1 = System.nanoTime();
                    running[0] = start();
                    writer.join(Duration.ofSeconds(60).toMillis());
                    expect(writerErrors.isEmpty(), "producing the second half: %s", writerErrors);
                    expectExact(out);
                    System.out.printf("      started again, counted exactly after %.1f s (%s)%n", (System.nanoTime() - t1) / 1e9, states);
                    expect(atKill < total, "the kill came after every update (%d of %d): not mid-run", atKill, total);
                } finally {
                    writer.join(Duration.ofSeconds(60).toMillis());
                }
            });
            app = running[0];
        } finally {
            if (app != null) {
                app.destroyForcibly();
                app.waitFor(30, TimeUnit.SECONDS);
            }
            JavaInterop.removeUnlessKept(stateDir);
            if (!"1".equals(System.getenv("JAVA_INTEROP_KEEP"))) {
                Files.deleteIfExists(log);
            }
        }
    }

    /** Starts the application in a JVM of its own; its states go to {@link #states}, its log to {@link #log}. */
    private Process start() throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), WordCountApp.class.getName(),
                t.bootstrap, APP, INPUT, OUTPUT, stateDir.toString(), StreamsConfig.EXACTLY_ONCE_V2);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    states.add(line.trim());
                }
            } catch (Exception e) {
                // the process ended
            }
        }, "eos-app-states");
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (Exception e) {
            return "(no log: " + e + ")";
        }
    }

    /** Lines from..to, each five words, keyed by line number; paced spreads them over about 4 s. */
    private void produceLines(int from, int to, boolean paced) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(t.producerProps("lz4"))) {
            List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
            for (int i = from; i < to; i++) {
                List<String> words = StreamsChecks.line(i);
                synchronized (truth) {
                    for (String w : words) {
                        truth.merge(w, 1L, Long::sum);
                    }
                }
                fs.add(p.send(new ProducerRecord<>(INPUT, "line-" + i, String.join(" ", words))));
                if (paced && i % 25 == 0) {
                    Thread.sleep(100); // the pace of the writes, not a wait for anything
                }
            }
            p.flush();
            for (var f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private int updates() {
        return counts.values().stream().mapToInt(List::size).sum();
    }

    private void poll(KafkaConsumer<String, Long> out) {
        for (ConsumerRecord<String, Long> r : out.poll(Duration.ofMillis(100))) {
            counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
        }
    }

    /** Reads on until each word's newest count is its true count, then wants exactly 1..n of each. */
    private void expectExact(KafkaConsumer<String, Long> out) {
        Map<String, Long> want;
        synchronized (truth) {
            want = new TreeMap<>(truth);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        // Done when each word's newest count is its true count, or one went past it (counted twice).
        while (!want.entrySet().stream().allMatch(e -> {
            List<Long> l = counts.get(e.getKey());
            return l != null && !l.isEmpty() && l.get(l.size() - 1).equals(e.getValue());
        }) && want.entrySet().stream().noneMatch(e -> counts.getOrDefault(e.getKey(), List.of()).size() > e.getValue())) {
            if (System.nanoTime() > deadline) {
                Map<String, String> diff = new TreeMap<>();
                for (String w : want.keySet()) {
                    List<Long> l = counts.getOrDefault(w, List.of());
                    diff.put(w, "want " + want.get(w) + ", " + l.size() + " counts, newest " + (l.isEmpty() ? "none" : l.get(l.size() - 1)));
                }
                throw new AssertionError("not within 90 s: each word's newest count its true count: " + diff + "\n" + states + "\n" + tail());
            }
            poll(out);
        }
        List<String> wrong = new ArrayList<>();
        for (var e : want.entrySet()) {
            List<Long> l = counts.get(e.getKey());
            for (int i = 0; i < l.size(); i++) {
                if (l.get(i) != i + 1) {
                    wrong.add(e.getKey() + ": " + l.size() + " counts for " + e.getValue() + ", at " + i + " " + l.get(i)
                            + " (around: " + l.subList(Math.max(0, i - 3), Math.min(l.size(), i + 4)) + ")");
                    break;
                }
            }
            if (l.size() != e.getValue()) {
                wrong.add(e.getKey() + ": " + l.size() + " counts, want " + e.getValue());
            }
        }
        expect(wrong.isEmpty(), "counts not exactly 1..n:\n%s", String.join("\n", wrong));
    }
}
