package interop;

import static interop.JavaInterop.WAIT;
import static interop.JavaInterop.expect;
import static interop.JavaInterop.expectEqual;
import static interop.JavaInterop.waitFor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka Streams against one gateway or a fleet: a word count with a state store
 * ({@code counts}, its changelog topic) behind a repartition topic ({@code words}),
 * {@code processing.guarantee=at_least_once}. Lines are produced in two halves; in a fleet,
 * while the second is written, the gateway coordinating the application's group is drained
 * ({@code iggy-kafka drain node N --yes --wait}) and then undone. After each half, the newest
 * count of every word in the output topic is its true count: at_least_once may write an update
 * twice, never a wrong final value.
 */
final class StreamsChecks {
    private static final String APP = "java-wordcount";
    private static final String INPUT = "streams-lines";
    private static final String OUTPUT = "streams-counts";
    private static final String CHANGELOG = APP + "-counts-changelog";
    private static final String REPARTITION = APP + "-words-repartition";
    private static final int LINES = 1500; // per half
    static final List<String> VOCABULARY = List.of(
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
            "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
            "uniform", "victor", "whiskey", "xray", "yankee", "zulu");

    private final JavaInterop t;
    private final Map<String, Long> truth = new TreeMap<>();
    private final List<KafkaStreams.State> states = Collections.synchronizedList(new ArrayList<>());

    StreamsChecks(JavaInterop t) {
        this.t = t;
    }

    void run(Admin admin) throws Exception {
        Path stateDir = Files.createTempDirectory("streams-state");
        KafkaStreams streams = null;
        try {
            JavaInterop.createTopic(admin, INPUT, 3);
            JavaInterop.createTopic(admin, OUTPUT, 3);
            streams = new KafkaStreams(topology(), props(stateDir));
            streams.setStateListener((now, before) -> states.add(now));
            streams.start();
            KafkaStreams s = streams;
            t.check("streams: a word count (state store, changelog, repartition topic) counts every word exactly", () -> {
                waitFor("the application RUNNING (" + states + ")", Duration.ofSeconds(60), () -> s.state() == KafkaStreams.State.RUNNING);
                produceLines(0, LINES, false);
                expectCounts();
            });
            t.check("streams: the changelog and repartition topics created through the gateway, with their configs", () -> {
                Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                expect(names.containsAll(List.of(CHANGELOG, REPARTITION)), "internal topics %s and %s not in %s", CHANGELOG, REPARTITION, names);
                ConfigResource changelog = new ConfigResource(ConfigResource.Type.TOPIC, CHANGELOG);
                ConfigResource repartition = new ConfigResource(ConfigResource.Type.TOPIC, REPARTITION);
                Map<ConfigResource, Config> cs = admin.describeConfigs(List.of(changelog, repartition)).all().get(30, TimeUnit.SECONDS);
                expectEqual("compact", cs.get(changelog).get("cleanup.policy").value(), CHANGELOG + " cleanup.policy");
                expectEqual("delete", cs.get(repartition).get("cleanup.policy").value(), REPARTITION + " cleanup.policy");
                int parts = admin.describeTopics(List.of(CHANGELOG, REPARTITION)).allTopicNames().get(30, TimeUnit.SECONDS)
                        .get(CHANGELOG).partitions().size();
                expectEqual(3, parts, CHANGELOG + " partitions");
            });
            if (!t.fleet()) {
                return;
            }
            t.check("streams: drained and undone, the gateway coordinating the group; the counts stay exact, every input committed", () -> {
                expect(t.iggyKafka != null && t.iggy != null, "no --iggy-kafka and --iggy to drain with");
                int node = JavaInterop.coordinator(admin, APP);
                int before = states.size();
                Thread writer = new Thread(() -> {
                    try {
                        produceLines(LINES, 2 * LINES, true);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, "streams-writer");
                List<Throwable> writerErrors = Collections.synchronizedList(new ArrayList<>());
                writer.setUncaughtExceptionHandler((th, e) -> writerErrors.add(e));
                writer.start();
                boolean drained = false;
                try {
                    t.iggyKafka("drain", "node", Integer.toString(node), "--yes", "--wait", "--timeout", "60s");
                    drained = true;
                    int now = JavaInterop.coordinator(admin, APP);
                    expect(now != node, "%s still names gateway %d its coordinator after its drain", APP, node);
                } finally {
                    // Undone also when a check failed: the checks after these need the gateway.
                    if (drained) {
                        t.iggyKafka("drain", "node", Integer.toString(node), "--undo", "--yes", "--wait", "--timeout", "60s");
                    }
                    writer.join(WAIT.toMillis() * 2);
                }
                expect(writerErrors.isEmpty(), "producing the second half: %s", writerErrors);
                expectCounts();
                expectCommitted(admin);
                List<KafkaStreams.State> since = List.copyOf(states.subList(before, states.size()));
                expect(since.isEmpty(), "the application changed state during the drain: %s", since);
            });
        } finally {
            if (streams != null) {
                streams.close(WAIT);
                streams.cleanUp();
            }
            JavaInterop.removeUnlessKept(stateDir);
        }
    }

    private static org.apache.kafka.streams.Topology topology() {
        return topology(INPUT, OUTPUT);
    }

    /** The word count from input to output: a state store behind a repartition topic. */
    static org.apache.kafka.streams.Topology topology(String input, String output) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMap((k, line) -> Arrays.stream(line.split(" ")).map(w -> KeyValue.pair(w, w)).collect(Collectors.toList()))
                .groupByKey(Grouped.<String, String>as("words").withKeySerde(Serdes.String()).withValueSerde(Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build();
    }

    private Properties props(Path stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, t.bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        // Every update to the store is written out: the output holds intermediate counts.
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "2");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "500");
        return p;
    }

    /**
     * Produces lines {@code from} to {@code to}, each five words of the vocabulary, keyed by
     * line number, and adds their words to the true counts; {@code paced} spreads them over
     * about 5 s, so that they are written while a drain goes on.
     */
    private void produceLines(int from, int to, boolean paced) throws Exception {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(t.producerProps("lz4"))) {
            List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
            for (int i = from; i < to; i++) {
                StringBuilder line = new StringBuilder();
                for (String w : line(i)) {
                    line.append(line.length() == 0 ? "" : " ").append(w);
                    synchronized (truth) {
                        truth.merge(w, 1L, Long::sum);
                    }
                }
                fs.add(p.send(new ProducerRecord<>(INPUT, "line-" + i, line.toString())));
                if (paced && i % 30 == 0) {
                    Thread.sleep(100); // the pace of the writes, not a wait for anything
                }
            }
            p.flush();
            for (var f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The five words of line i. */
    static List<String> line(int i) {
        List<String> out = new ArrayList<>();
        for (int j = 0; j < 5; j++) {
            out.add(VOCABULARY.get((i * 7 + j * j * 3 + i / 13) % VOCABULARY.size()));
        }
        return out;
    }

    /** Reads the output topic from its start until the newest count of each word is its true count. */
    private void expectCounts() throws Exception {
        Map<String, Long> want;
        synchronized (truth) {
            want = new TreeMap<>(truth);
        }
        Properties p = t.consumerProps(null, null);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        Map<String, Long> latest = new TreeMap<>();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = List.of(new TopicPartition(OUTPUT, 0), new TopicPartition(OUTPUT, 1), new TopicPartition(OUTPUT, 2));
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!latest.equals(want)) {
                if (System.nanoTime() > deadline) {
                    Map<String, String> diff = new TreeMap<>();
                    for (String w : want.keySet()) {
                        if (!want.get(w).equals(latest.get(w))) {
                            diff.put(w, "want " + want.get(w) + ", newest " + latest.get(w));
                        }
                    }
                    throw new AssertionError("not within 60 s: the newest count of each word in " + OUTPUT + " its true count: " + diff
                            + "; the application " + states);
                }
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                    latest.put(r.key(), r.value());
                }
            }
        }
    }

    /** Waits until the application's group has committed the end of every input partition. */
    private static void expectCommitted(Admin admin) throws Exception {
        List<TopicPartition> parts = List.of(new TopicPartition(INPUT, 0), new TopicPartition(INPUT, 1), new TopicPartition(INPUT, 2));
        Map<TopicPartition, Long> end = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (var e : admin.listOffsets(parts.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
                .all().get(30, TimeUnit.SECONDS).entrySet()) {
            end.put(e.getKey(), e.getValue().offset());
        }
        Map<TopicPartition, Long> committed = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        waitFor("the group's commits at the input's end offsets " + end + " (committed " + committed + ")", WAIT, () -> {
            try {
                var got = admin.listConsumerGroupOffsets(APP).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                for (TopicPartition tp : parts) {
                    committed.put(tp, got.get(tp) == null ? -1 : got.get(tp).offset());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return committed.equals(end);
        });
    }
}
