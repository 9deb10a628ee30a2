package interop;

import static interop.JavaInterop.WAIT;
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
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Kafka Streams with {@code processing.guarantee=exactly_once_v2} against gateways started with
 * {@code --transactions}: the word count of {@link StreamsChecks} as an application in a JVM of
 * its own ({@link WordCountApp}), every store update written out. Read with read_committed, the
 * counts of each word in the output are exactly 1, 2, ... n, n its true count: a count written
 * twice, or one missing, shows.
 *
 * <p>Against one gateway, more lines are then written while the application is killed with
 * SIGKILL mid-run and started again on the same state directory, and the counts are still
 * exactly 1 ... n. In a fleet, lines are written while the gateway coordinating the
 * application's transactional id is drained and the drain undone, then while the gateway
 * coordinating it then is killed with SIGKILL and started again on its port; the application
 * runs on in the same JVM, and the counts are still exactly 1 ... n. How long no output was
 * committed after each fault is printed: the longest gap between two reads of the output that
 * brought new committed records, as its read_committed reader saw it.
 */
final class EosChecks {
    private static final String APP = "java-wordcount-eos";
    private static final String INPUT = "eos-lines";
    private static final String OUTPUT = "eos-counts";
    private static final int LINES = 1000; // per half

    private final JavaInterop t;
    /** Each word's true count over the lines written so far. */
    private final Map<String, Long> truth = new TreeMap<>();
    /** The next line to write. */
    private final AtomicInteger next = new AtomicInteger();
    /** The application's states and uncaught exceptions, as it prints them. */
    private final List<String> states = Collections.synchronizedList(new ArrayList<>());
    /** Each word's counts in the output as read so far, read_committed; guarded by itself. */
    private final Map<String, List<Long>> counts = new TreeMap<>();
    /** When (System.nanoTime) each read of the output that brought records ended; guarded by counts. */
    private final List<Long> arrivals = new ArrayList<>();
    private Path stateDir;
    private Path log;

    EosChecks(JavaInterop t) {
        this.t = t;
    }

    void run(Admin admin) throws Exception {
        stateDir = Files.createTempDirectory("streams-eos-state");
        log = stateDir.resolveSibling(stateDir.getFileName() + ".log");
        Process app = null;
        JavaInterop.createTopic(admin, INPUT, 3);
        JavaInterop.createTopic(admin, OUTPUT, 3);
        try (Output out = new Output()) {
            produceLines(LINES);
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
            if (t.fleet()) {
                drained(admin, out, app);
                coordinatorKilled(admin, out, app);
            } else {
                app = killed(out, app);
            }
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

    /** One gateway: the application killed with SIGKILL mid-run and started again; returns the new one. */
    private Process killed(Output out, Process app) {
        int before = updates();
        Process[] running = {app};
        t.check("streams exactly_once_v2: SIGKILLed mid-run and started again on its state directory; the counts are still exactly 1..n", () -> {
            try (Writer writer = new Writer(LINES)) {
                // Killed once it has committed some of the second half.
                waitFor("progress on the second half: " + updates() + " updates\n" + tail(), Duration.ofSeconds(60), () -> updates() >= before + 200);
                running[0].destroyForcibly(); // SIGKILL
                expect(running[0].waitFor(30, TimeUnit.SECONDS), "the killed application did not exit");
                int atKill = updates();
                int total = (int) (5L * 2 * LINES);
                System.out.printf("      killed with SIGKILL after %d of %d updates%n", atKill, total);
                expect(atKill < total, "the kill came after every update (%d of %d): not mid-run", atKill, total);
                states.clear();
                long t1 = System.nanoTime();
                running[0] = start();
                writer.close();
                expectExact(out);
                System.out.printf("      started again, counted exactly after %.1f s (%s)%n", (System.nanoTime() - t1) / 1e9, states);
            }
        });
        return running[0];
    }

    /** A fleet: the gateway coordinating the application's transactional id drained and undone. */
    private void drained(Admin admin, Output out, Process app) {
        t.check("streams exactly_once_v2 in a fleet: the gateway coordinating its transactional id drained, then undone, while lines are written;"
                + " the application runs on, the counts are exactly 1..n", () -> {
            int from = states.size();
            try (Writer writer = new Writer(0)) {
                progress(app, 100, "before the drain");
                String id = transactionalId(admin);
                TransactionDescription seen = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                int node = seen.coordinatorId();
                String n = Integer.toString(node);
                long d0 = System.nanoTime();
                t.iggyKafka("drain", "node", n, "--yes", "--wait", "--timeout", "60s");
                long d1 = System.nanoTime();
                long u0;
                try {
                    int now = coordinator(admin, id);
                    expect(now != node, "%s still coordinated by gateway %d after its drain", id, node);
                    progress(app, 200, "after the drain of gateway " + node);
                    System.out.printf("      drained gateway %d, coordinating %s (%s just before), in %.1f s (now gateway %d); %s%n", node, id, seen.state(),
                            (d1 - d0) / 1e9, now, stall(d0));
                } finally {
                    // Undone also when a check failed: the checks after these need the gateway.
                    u0 = System.nanoTime();
                    t.iggyKafka("drain", "node", n, "--undo", "--yes", "--wait", "--timeout", "60s");
                }
                long u1 = System.nanoTime();
                backTo(admin, id, node);
                progress(app, 200, "after the drain of gateway " + node + " was undone");
                System.out.printf("      undone in %.1f s, %s coordinated by gateway %d again; %s%n", (u1 - u0) / 1e9, id, node, stall(u0));
            }
            expectExact(out);
            expectRunning(app, from);
        });
    }

    /** A fleet: the gateway coordinating the application's transactional id killed with SIGKILL and started again. */
    private void coordinatorKilled(Admin admin, Output out, Process app) {
        t.check("streams exactly_once_v2 in a fleet: the gateway coordinating its transactional id SIGKILLed, then started again on its port,"
                + " while lines are written; the application runs on, the counts are exactly 1..n", () -> {
            int from = states.size();
            try (Writer writer = new Writer(0)) {
                progress(app, 100, "before the SIGKILL");
                String id = transactionalId(admin);
                TransactionDescription seen = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                int node = seen.coordinatorId();
                long k0 = System.nanoTime();
                JavaInterop.Killed k = t.sigkillGateway(node);
                progress(app, 200, "after the SIGKILL of gateway " + node);
                int now = coordinator(admin, id);
                System.out.printf("      SIGKILLed gateway %d, coordinating %s (%s just before; now gateway %d); %s%n", node, id, seen.state(), now, stall(k0));
                expect(now != node, "%s still coordinated by gateway %d after its SIGKILL", id, node);
                long r0 = System.nanoTime();
                t.restartGateway(k);
                long r1 = System.nanoTime();
                backTo(admin, id, node);
                long r2 = System.nanoTime();
                progress(app, 200, "after gateway " + node + " started again");
                System.out.printf("      gateway %d started again, accepting after %.1f s, coordinating %s again after %.1f s; %s%n", node, (r1 - r0) / 1e9,
                        id, (r2 - r0) / 1e9, stall(r0));
            }
            expectExact(out);
            expectRunning(app, from);
        });
    }

    /** The application's transactional id: its one stream thread's, as ListTransactions lists it. */
    private static String transactionalId(Admin admin) throws Exception {
        List<String> ids = new ArrayList<>();
        waitFor("the application's transactional id listed by ListTransactions", WAIT, () -> {
            try {
                ids.clear();
                for (TransactionListing l : admin.listTransactions().all().get(30, TimeUnit.SECONDS)) {
                    if (l.transactionalId().startsWith(APP + "-")) {
                        ids.add(l.transactionalId());
                    }
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return !ids.isEmpty();
        });
        expect(ids.size() == 1, "want the transactional id of one stream thread, got %s", ids);
        return ids.get(0);
    }

    /** The gateway coordinating a transactional id (FindCoordinator with key type 1, through DescribeTransactions). */
    private static int coordinator(Admin admin, String transactionalId) throws Exception {
        return admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get(30, TimeUnit.SECONDS).coordinatorId();
    }

    /** Waits (30 s at most) until gateway {@code node} coordinates the transactional id again, having taken its log partition back. */
    private static void backTo(Admin admin, String id, int node) throws InterruptedException {
        waitFor(id + " coordinated by gateway " + node + " again", WAIT, () -> {
            try {
                return coordinator(admin, id) == node;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    /** Waits until the output has {@code n} more updates (60 s at most) and the application still runs. */
    private void progress(Process app, int n, String when) throws InterruptedException {
        int mark = updates() + n;
        waitFor(n + " more updates committed " + when + " (" + updates() + " of " + mark + ") " + states + "\n" + tail(), Duration.ofSeconds(60),
                () -> updates() >= mark || !app.isAlive());
        expect(app.isAlive(), "the application exited %s: %s\n%s", when, states, tail());
    }

    /**
     * The longest time without newly committed output since {@code from}: from the last read that
     * brought records before it, to the newest such read; and for comparison the median time
     * between two such reads in the 3 s before {@code from}.
     */
    private String stall(long from) {
        List<Long> a;
        synchronized (counts) {
            a = List.copyOf(arrivals);
        }
        int i = a.size() - 1;
        while (i > 0 && a.get(i) > from) {
            i--;
        }
        long longest = 0;
        long at = from;
        for (int j = i + 1; j < a.size(); j++) {
            long gap = a.get(j) - a.get(j - 1);
            if (gap > longest) {
                longest = gap;
                at = a.get(j - 1);
            }
        }
        List<Long> before = new ArrayList<>();
        for (int j = 1; j <= i; j++) {
            if (a.get(j - 1) >= from - Duration.ofSeconds(3).toNanos()) {
                before.add(a.get(j) - a.get(j - 1));
            }
        }
        Collections.sort(before);
        String median = before.isEmpty() ? "none" : String.format("%.2f s", before.get(before.size() / 2) / 1e9);
        return String.format("the longest time without committed output %.2f s, from %+.2f s (median gap in the 3 s before: %s)", longest / 1e9,
                (at - from) / 1e9, median);
    }

    /**
     * Waits until the application is RUNNING and checks that since state {@code from} it neither
     * exited nor failed nor rebalanced: the gateways hand its group and its transactional id over
     * without fencing its producer or moving its tasks, as they hand a group over (a fenced
     * producer would have its tasks closed, a REBALANCING, and counts still exact).
     */
    private void expectRunning(Process app, int from) throws InterruptedException {
        waitFor("the application RUNNING " + states + "\n" + tail(), Duration.ofSeconds(60),
                () -> !app.isAlive() || states.get(states.size() - 1).equals("RUNNING"));
        List<String> since;
        synchronized (states) { // the reader of the application's output adds to it
            since = List.copyOf(states.subList(from, states.size()));
        }
        long rebalances = since.stream().filter("REBALANCING"::equals).count();
        System.out.printf("      the application's states since: %s (%d REBALANCING)%n", since, rebalances);
        expect(app.isAlive(), "the application exited: %s\n%s", since, tail());
        expect(since.stream().noneMatch(s -> s.equals("ERROR") || s.startsWith("uncaught")), "the application failed: %s\n%s", since, tail());
        expect(rebalances == 0, "the application rebalanced: %s\n%s", since, tail());
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

    /** Writes line {@code i} (five words, keyed by its number) and adds its words to the true counts. */
    private Future<?> send(KafkaProducer<String, String> p, int i) {
        List<String> words = StreamsChecks.line(i);
        synchronized (truth) {
            for (String w : words) {
                truth.merge(w, 1L, Long::sum);
            }
        }
        return p.send(new ProducerRecord<>(INPUT, "line-" + i, String.join(" ", words)));
    }

    /** Writes the next {@code n} lines at once. */
    private void produceLines(int n) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(t.producerProps("lz4"))) {
            List<Future<?>> fs = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                fs.add(send(p, next.getAndIncrement()));
            }
            p.flush();
            for (var f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Writes the next lines in a thread of its own, 25 every 100 ms (the pace, not a wait for
     * anything): {@code n} of them, or until closed when {@code n} is 0. Closing waits for every
     * line to be acknowledged and fails when one was not.
     */
    private final class Writer implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;
        private final int n;
        private boolean closed;

        Writer(int n) {
            this.n = n;
            thread = new Thread(() -> {
                try (KafkaProducer<String, String> p = new KafkaProducer<>(t.producerProps("lz4"))) {
                    List<Future<?>> fs = new ArrayList<>();
                    for (int k = 0; !stop.get() && (n == 0 || k < n); k++) {
                        fs.add(send(p, next.getAndIncrement()));
                        if (k % 25 == 24) {
                            Thread.sleep(100);
                        }
                    }
                    p.flush();
                    for (var f : fs) {
                        f.get(30, TimeUnit.SECONDS);
                    }
                } catch (Exception e) {
                    errors.add(e);
                }
            }, "eos-writer");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            if (n == 0) {
                stop.set(true);
            }
            if (!closed) {
                closed = true;
                thread.join(Duration.ofSeconds(60).toMillis());
                expect(!thread.isAlive(), "the writer did not finish within 60 s");
                expect(errors.isEmpty(), "writing the lines: %s", errors);
            }
        }
    }

    /** The output topic read from its start with read_committed in a thread of its own, into {@link #counts}. */
    private final class Output implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;

        Output() {
            Properties cp = t.consumerProps(null, null);
            cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            thread = new Thread(() -> {
                try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(cp)) {
                    List<TopicPartition> parts = List.of(new TopicPartition(OUTPUT, 0), new TopicPartition(OUTPUT, 1), new TopicPartition(OUTPUT, 2));
                    c.assign(parts);
                    c.seekToBeginning(parts);
                    while (!stop.get()) {
                        ConsumerRecords<String, Long> rs = c.poll(Duration.ofMillis(100));
                        if (rs.isEmpty()) {
                            continue;
                        }
                        synchronized (counts) {
                            for (ConsumerRecord<String, Long> r : rs) {
                                counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                            }
                            arrivals.add(System.nanoTime());
                        }
                    }
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }, "eos-output");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(WAIT.toMillis() * 2);
        }
    }

    private int updates() {
        synchronized (counts) {
            return counts.values().stream().mapToInt(List::size).sum();
        }
    }

    /** Waits until each word's newest count is its true count, then wants exactly 1..n of each. */
    private void expectExact(Output out) throws InterruptedException {
        Map<String, Long> want;
        synchronized (truth) {
            want = new TreeMap<>(truth);
        }
        Map<String, List<Long>> got = new TreeMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        // Done when each word's newest count is its true count, or one went past it (counted twice).
        while (true) {
            synchronized (counts) {
                got.clear();
                counts.forEach((w, l) -> got.put(w, List.copyOf(l)));
            }
            boolean done = want.entrySet().stream().allMatch(e -> {
                List<Long> l = got.get(e.getKey());
                return l != null && !l.isEmpty() && l.get(l.size() - 1).equals(e.getValue());
            }) || want.entrySet().stream().anyMatch(e -> got.getOrDefault(e.getKey(), List.of()).size() > e.getValue());
            if (done) {
                break;
            }
            if (System.nanoTime() > deadline) {
                Map<String, String> diff = new TreeMap<>();
                for (String w : want.keySet()) {
                    List<Long> l = got.getOrDefault(w, List.of());
                    diff.put(w, "want " + want.get(w) + ", " + l.size() + " counts, newest " + (l.isEmpty() ? "none" : l.get(l.size() - 1)));
                }
                throw new AssertionError("not within 90 s: each word's newest count its true count: " + diff + "\nthe reader's errors: " + out.errors
                        + "\n" + states + "\n" + tail());
            }
            Thread.sleep(50);
        }
        List<String> wrong = new ArrayList<>();
        for (var e : want.entrySet()) {
            List<Long> l = got.get(e.getKey());
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
