package interop;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Apache Kafka's Java client and command-line tools against a gateway (one, or a fleet): every
 * check prints PASS or FAIL with its name, and the last line counts them. The exit status is 1
 * when a check failed.
 *
 * <p>Arguments: {@code --bootstrap HOST:PORT[,...] --brokers N --label NAME --tools-classpath CP}
 * and optionally {@code --sasl-bootstrap HOST:PORT}, a gateway started with {@code --sasl} whose
 * user {@code iggy} (password {@code iggy}) sets and uses a SCRAM credential, with
 * {@code --provisioned-user NAME} an Iggy user (read and write, no topic creation) whose
 * credential {@code iggy} provisions as an administrator with kafka-configs, with
 * {@code --acl-user NAME} an Iggy user without permissions whose ACLs {@code iggy} changes, and
 * {@code --node-pids ID:PID,...}, the processes of the fleet's gateways by node id, which the
 * last check signals, and {@code --tools-archive PATH}, a class data sharing archive of the
 * tools' classes that the first tool run writes and the others map, which halves their start.
 * In a fleet, {@code --iggy-kafka PATH --iggy HOST:PORT} name the binary and the fleet's Iggy
 * server, with which a Streams check drains a gateway ({@link StreamsChecks}).
 * {@code --connect-classpath CP} is the classpath of Kafka Connect's workers, which the Connect
 * checks ({@link ConnectChecks}) start. {@code --only PARTS} runs only the named parts of the
 * checks: clients, tools, connect, transactions, streams, eos, failover. {@code --transactions true}
 * says the gateways serve transactions ({@code serve --transactions}): the transactional checks
 * ({@link TxnChecks}) and Streams with exactly_once_v2 ({@link EosChecks}) run; without it a transactional
 * producer and listTransactions are checked to be refused at once.
 */
public final class JavaInterop {
    static final Duration WAIT = Duration.ofSeconds(30);

    final String bootstrap;
    private final int brokers;
    private final String label;
    final String toolsClasspath;
    private final String saslBootstrap;
    private final String provisionedUser;
    private final String aclUser;
    private final Path toolsArchive;
    private final Map<Integer, Long> nodePids = new TreeMap<>();
    /** Gateways started again after a SIGKILL ({@link #restartGateway}), stopped at the end. */
    private final List<Process> restarted = Collections.synchronizedList(new ArrayList<>());
    final String iggyKafka;
    final String iggy;
    final String connectClasspath;
    private final Set<String> only;
    /** Whether the gateways serve transactions (serve --transactions). */
    final boolean transactions;
    private int passed;
    private int failed;

    private JavaInterop(Map<String, String> args) {
        bootstrap = required(args, "bootstrap");
        brokers = Integer.parseInt(required(args, "brokers"));
        label = required(args, "label");
        toolsClasspath = required(args, "tools-classpath");
        saslBootstrap = args.get("sasl-bootstrap");
        provisionedUser = args.get("provisioned-user");
        aclUser = args.get("acl-user");
        toolsArchive = args.containsKey("tools-archive") ? Path.of(args.get("tools-archive")) : null;
        iggyKafka = args.get("iggy-kafka");
        iggy = args.get("iggy");
        connectClasspath = args.get("connect-classpath");
        only = args.containsKey("only") ? Set.of(args.get("only").split(",")) : null;
        transactions = Boolean.parseBoolean(args.getOrDefault("transactions", "false"));
        if (args.containsKey("node-pids")) {
            for (String np : args.get("node-pids").split(",")) {
                String[] kv = np.split(":");
                nodePids.put(Integer.parseInt(kv[0]), Long.parseLong(kv[1]));
            }
        }
    }

    public static void main(String[] argv) throws Exception {
        // The clients' own logging (slf4j-simple, to stderr): warnings and errors only.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        JavaInterop t = new JavaInterop(args);
        // Also when the script's timeout ends the program (SIGTERM).
        Runtime.getRuntime().addShutdownHook(new Thread(t::stopRestarted, "stop-restarted-gateways"));
        t.run();
        System.out.printf("java-interop (%s): %d passed, %d failed%n", t.label, t.passed, t.failed);
        System.exit(t.failed > 0 ? 1 : 0);
    }

    private static String required(Map<String, String> args, String name) {
        String v = args.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    // --- checks -----------------------------------------------------------------------------

    /** A check: returns normally to pass, throws to fail (the message says what was seen). */
    @FunctionalInterface
    interface Check {
        void run() throws Exception;
    }

    void check(String name, Check c) {
        try {
            c.run();
            passed++;
            System.out.println("PASS  " + name);
        } catch (Throwable e) {
            failed++;
            System.out.println("FAIL  " + name);
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            String detail = cause instanceof AssertionError ? cause.getMessage() : cause.toString();
            for (String line : String.valueOf(detail).split("\n", 40)) {
                System.out.println("      " + line);
            }
        }
        System.out.flush();
    }

    static void expect(boolean ok, String format, Object... values) {
        if (!ok) {
            throw new AssertionError(String.format(format, values));
        }
    }

    static void expectEqual(Object want, Object got, String what) {
        if (!want.equals(got)) {
            throw new AssertionError(what + ": want " + want + ", got " + got);
        }
    }

    private void run() throws Exception {
        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            part("clients", () -> {
                codecs(admin);
                group(admin, "classic");
                group(admin, "consumer");
                adminTopics(admin);
                adminCluster(admin);
                adminGroups(admin);
                deleteRecords(admin);
                scramUnauthenticated(admin);
                aclsUnauthenticated(admin);
                unsupported(admin);
                if (saslBootstrap != null) {
                    scram();
                }
            });
            part("tools", () -> tools(admin));
            part("connect", () -> {
                if (connectClasspath == null) {
                    check("connect: the workers' classpath", () -> {
                        throw new AssertionError("no --connect-classpath");
                    });
                } else {
                    new ConnectChecks(this).run(admin);
                }
            });
            if (transactions) {
                part("transactions", () -> new TxnChecks(this).run(admin));
            }
            // Before failover, which stops two of the three gateways.
            part("streams", () -> new StreamsChecks(this).run(admin));
            if (transactions) {
                part("eos", () -> new EosChecks(this).run(admin));
            }
            if (fleet()) {
                part("failover", () -> failover(admin));
            }
        }
    }

    /**
     * Runs the checks of {@code name} unless --only (clients, tools, connect, transactions, streams, eos, failover;
     * comma-separated) leaves it out, and prints how long they took.
     */
    private void part(String name, Check c) throws Exception {
        if (only != null && !only.contains(name)) {
            return;
        }
        long start = System.nanoTime();
        c.run();
        System.out.printf("(%s: %.1f s)%n", name, (System.nanoTime() - start) / 1e9);
    }

    /**
     * Removes a directory of the checks (a Streams state directory, Connect's files and worker
     * logs) unless JAVA_INTEROP_KEEP=1, which keeps them for a look after the run.
     */
    static void removeUnlessKept(Path dir) throws IOException {
        if ("1".equals(System.getenv("JAVA_INTEROP_KEEP"))) {
            System.out.println("kept " + dir);
            return;
        }
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Collections.reverseOrder()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Whether the checks run against a fleet whose gateways they may signal (--node-pids). */
    boolean fleet() {
        return !nodePids.isEmpty();
    }

    /** Runs the gateway's binary against the fleet's Iggy server; fails with its output unless it exits 0. */
    void iggyKafka(String... args) throws Exception {
        expect(iggyKafka != null && iggy != null, "no --iggy-kafka and --iggy to run %s with", Arrays.toString(args));
        List<String> cmd = new ArrayList<>(List.of(iggyKafka));
        cmd.addAll(Arrays.asList(args));
        cmd.addAll(List.of("--iggy", iggy));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not finish within 90 s");
        }
        expect(p.exitValue() == 0, "%s: exit status %d\n%s", String.join(" ", cmd), p.exitValue(), out);
    }

    /** A gateway killed by {@link #sigkillGateway}: how it was started, to start it again. */
    record Killed(int node, List<String> command, Path log, InetSocketAddress bind) {
    }

    /**
     * Kills gateway {@code node} of the fleet with SIGKILL and waits for its exit. Its command
     * line and the file its output went to are read from /proc first, so that
     * {@link #restartGateway} starts it again as the script started it.
     */
    Killed sigkillGateway(int node) throws Exception {
        Long pid = nodePids.get(node);
        expect(pid != null, "node %d is not a gateway of %s", node, nodePids);
        Path proc = Path.of("/proc", pid.toString());
        List<String> command = List.of(new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8).split("\0"));
        Path log = Files.readSymbolicLink(proc.resolve("fd").resolve("1"));
        int at = command.indexOf("--bind");
        expect(at >= 0 && at + 1 < command.size(), "gateway %d's command line has no --bind: %s", node, command);
        String bind = command.get(at + 1);
        int colon = bind.lastIndexOf(':');
        InetSocketAddress addr = new InetSocketAddress(bind.substring(0, colon), Integer.parseInt(bind.substring(colon + 1)));
        ProcessHandle h = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("gateway " + node + " is not running"));
        expect(h.destroyForcibly(), "SIGKILL not sent to gateway %d", node);
        h.onExit().get(30, TimeUnit.SECONDS);
        return new Killed(node, command, log, addr);
    }

    /**
     * Starts a gateway killed by {@link #sigkillGateway} again, with its command line, its output
     * appended to its log, and returns once it accepts connections on its address. The process is
     * this program's child: it is stopped (SIGTERM) when the program ends.
     */
    void restartGateway(Killed k) throws Exception {
        Process p = new ProcessBuilder(k.command()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(k.log().toFile())).start();
        restarted.add(p);
        nodePids.put(k.node(), p.pid());
        waitFor("gateway " + k.node() + " started again accepting on " + k.bind(), WAIT, () -> {
            if (!p.isAlive()) {
                return true;
            }
            try (Socket s = new Socket()) {
                s.connect(k.bind(), 200);
                return true;
            } catch (IOException e) {
                return false;
            }
        });
        if (!p.isAlive()) {
            throw new AssertionError("gateway " + k.node() + " started again exited with status " + p.exitValue() + " (its log: " + k.log() + ")");
        }
    }

    /** Stops the gateways {@link #restartGateway} started: SIGTERM, SIGKILL after 10 s. */
    private void stopRestarted() {
        List<Process> ps;
        synchronized (restarted) {
            ps = List.copyOf(restarted);
        }
        for (Process p : ps) {
            p.destroy();
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
    }

    // --- client properties ------------------------------------------------------------------

    static Properties adminProps(String servers) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return p;
    }

    Properties producerProps(String codec) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    Properties consumerProps(String group, String protocol) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            if (protocol.equals("classic")) {
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            }
        }
        return p;
    }

    static void createTopic(Admin admin, String name, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }

    /** Produces records with the idempotent acks=all producer and waits for every ack. */
    private List<RecordMetadata> produce(String codec, List<ProducerRecord<String, String>> records) throws Exception {
        List<RecordMetadata> out = new ArrayList<>();
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(codec))) {
            List<java.util.concurrent.Future<RecordMetadata>> fs = new ArrayList<>();
            for (ProducerRecord<String, String> r : records) {
                fs.add(p.send(r));
            }
            p.flush();
            for (var f : fs) {
                out.add(f.get(30, TimeUnit.SECONDS));
            }
        }
        return out;
    }

    /** Reads the given partitions from their start to their end offsets (read before). */
    private List<ConsumerRecord<String, String>> readAll(Collection<TopicPartition> parts) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(null, null))) {
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts, WAIT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (parts.stream().anyMatch(tp -> c.position(tp, WAIT) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("not at the end offsets " + end + " within " + WAIT + "; read " + out.size());
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    private static String headers(ConsumerRecord<String, String> r) {
        List<String> hs = new ArrayList<>();
        for (Header h : r.headers()) {
            hs.add(h.key() + "=" + (h.value() == null ? "null" : new String(h.value(), StandardCharsets.UTF_8)));
        }
        return String.join(",", hs);
    }

    // --- the producer over every codec ------------------------------------------------------

    private void codecs(Admin admin) {
        String pad = "x".repeat(300);
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            String topic = "codec-" + codec;
            check("producer (idempotent, acks=all, " + codec + ") then a consumer reads back exactly its records", () -> {
                createTopic(admin, topic, 2);
                List<ProducerRecord<String, String>> sent = new ArrayList<>();
                List<String> want = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    int part = i % 2;
                    var r = new ProducerRecord<>(topic, part, "k" + i, "v" + i + "-" + codec + "-" + pad);
                    r.headers().add("codec", codec.getBytes(StandardCharsets.UTF_8));
                    r.headers().add("n", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
                    if (i == 3) {
                        r.headers().add("empty", null);
                    }
                    sent.add(r);
                    want.add(part + "|" + (i / 2) + "|k" + i + "|v" + i + "-" + codec + "-" + pad + "|codec=" + codec + ",n=" + i
                            + (i == 3 ? ",empty=null" : ""));
                }
                sent.add(new ProducerRecord<>(topic, 1, null, null));
                want.add("1|10|null|null|");
                List<RecordMetadata> acks = produce(codec, sent);
                for (int i = 0; i < sent.size(); i++) {
                    long wantOffset = i < 20 ? i / 2 : 10;
                    expectEqual(wantOffset, acks.get(i).offset(), "offset of record " + i);
                }
                List<String> got = readAll(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1))).stream()
                        .map(r -> r.partition() + "|" + r.offset() + "|" + r.key() + "|" + r.value() + "|" + headers(r))
                        .sorted().collect(Collectors.toList());
                expectEqual(want.stream().sorted().collect(Collectors.toList()), got, "records read back");
            });
        }
    }

    // --- consumer groups --------------------------------------------------------------------

    /**
     * Polls a group member until it holds {@code n} records, commits, and leaves: the records
     * it got, in the order received per partition.
     */
    private List<String> consumeInGroup(String topic, String group, String protocol, int n) {
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(group, protocol))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (got.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("got " + got.size() + " of " + n + " records within " + WAIT + ": " + got);
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    got.add(r.value());
                }
            }
            c.commitSync(WAIT);
        }
        return got;
    }

    private void group(Admin admin, String protocol) {
        String topic = "group-" + protocol;
        String group = "java-" + protocol;
        check("group.protocol=" + protocol + ": a member reads 30 records of 3 partitions and commits; a second resumes at the commit", () -> {
            createTopic(admin, topic, 3);
            List<ProducerRecord<String, String>> first = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                first.add(new ProducerRecord<>(topic, i % 3, "k" + i, "r" + i));
            }
            produce("none", first);
            List<String> got = consumeInGroup(topic, group, protocol, 30);
            expectEqual(30L, got.stream().distinct().count(), "distinct records read by the first member (" + got + ")");
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            Map<Integer, Long> offsets = new TreeMap<>();
            committed.forEach((tp, om) -> offsets.put(tp.partition(), om.offset()));
            expectEqual(Map.of(0, 10L, 1, 10L, 2, 10L), offsets, "committed offsets");

            List<ProducerRecord<String, String>> more = new ArrayList<>();
            for (int i = 30; i < 39; i++) {
                more.add(new ProducerRecord<>(topic, i % 3, "k" + i, "r" + i));
            }
            produce("none", more);
            // Earlier records would come before these in their partitions: nine records read
            // are exactly the nine new ones only if the member started at the commit.
            List<String> resumed = consumeInGroup(topic, group, protocol, 9);
            List<String> want = new ArrayList<>();
            for (int i = 30; i < 39; i++) {
                want.add("r" + i);
            }
            expectEqual(want, resumed.stream().sorted().collect(Collectors.toList()), "records read by the second member");
        });
        check("group.protocol=" + protocol + ": describe names the group's type and state, empty after its members left", () -> {
            ConsumerGroupDescription d =
                    admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
            GroupType wantType = protocol.equals("classic") ? GroupType.CLASSIC : GroupType.CONSUMER;
            expectEqual(wantType, d.type(), "type");
            expectEqual(GroupState.EMPTY, d.groupState(), "state");
            expectEqual(0, d.members().size(), "members");
        });
    }

    // --- Admin ------------------------------------------------------------------------------

    private void adminTopics(Admin admin) {
        String topic = "admin-topic";
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        check("admin: createTopics with retention.ms, then describeTopics: 2 partitions, a topic id", () -> {
            NewTopic nt = new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "3600000"));
            var result = admin.createTopics(List.of(nt));
            result.all().get(30, TimeUnit.SECONDS);
            expectEqual(2, result.numPartitions(topic).get(), "numPartitions in the create answer");
            Config created = result.config(topic).get();
            expectEqual("3600000", created.get("retention.ms").value(), "retention.ms in the create answer");
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            expectEqual(2, d.partitions().size(), "partitions");
            expect(!Uuid.ZERO_UUID.equals(d.topicId()), "topic id is zero");
            expect(d.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0), "a partition without a leader: %s", d);
        });
        check("admin: createPartitions to 4, describeTopics lists 4", () -> {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get(30, TimeUnit.SECONDS);
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            expectEqual(4, d.partitions().size(), "partitions");
        });
        check("admin: describeConfigs reports retention.ms as the topic's own config", () -> {
            Config c = admin.describeConfigs(List.of(res)).all().get(30, TimeUnit.SECONDS).get(res);
            ConfigEntry e = c.get("retention.ms");
            expect(e != null, "no retention.ms in %s", c);
            expectEqual("3600000", e.value(), "retention.ms");
            expectEqual(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, e.source(), "source");
        });
        check("admin: incrementalAlterConfigs sets max.message.bytes and deletes retention.ms; describeConfigs agrees", () -> {
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE))))
                    .all().get(30, TimeUnit.SECONDS);
            Config c = admin.describeConfigs(List.of(res)).all().get(30, TimeUnit.SECONDS).get(res);
            expectEqual("200000", c.get("max.message.bytes").value(), "max.message.bytes");
            expectEqual(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, c.get("max.message.bytes").source(), "max.message.bytes source");
            expectEqual(ConfigEntry.ConfigSource.DEFAULT_CONFIG, c.get("retention.ms").source(), "retention.ms source after DELETE");
        });
        check("admin: an unknown topic config is refused with InvalidConfigException", () -> {
            try {
                admin.incrementalAlterConfigs(Map.of(res, List.of(
                        new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET))))
                        .all().get(30, TimeUnit.SECONDS);
                throw new AssertionError("accepted");
            } catch (ExecutionException e) {
                expect(e.getCause() instanceof org.apache.kafka.common.errors.InvalidConfigurationException,
                        "want InvalidConfigurationException, got %s", e.getCause());
            }
        });
        // The log keeps every record whatever the policy (see docs/compatibility.md): compact is taken,
        // kept and reported, as Kafka Connect requires of its internal topics.
        check("admin: cleanup.policy=compact at creation, APPEND delete; describeConfigs reports compact,delete", () -> {
            String compacted = "admin-compacted";
            ConfigResource cres = new ConfigResource(ConfigResource.Type.TOPIC, compacted);
            admin.createTopics(List.of(new NewTopic(compacted, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(30, TimeUnit.SECONDS);
            ConfigEntry e = admin.describeConfigs(List.of(cres)).all().get(30, TimeUnit.SECONDS).get(cres).get("cleanup.policy");
            expectEqual("compact", e.value(), "cleanup.policy after create");
            expectEqual(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, e.source(), "source");
            admin.incrementalAlterConfigs(Map.of(cres, List.of(
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.APPEND))))
                    .all().get(30, TimeUnit.SECONDS);
            e = admin.describeConfigs(List.of(cres)).all().get(30, TimeUnit.SECONDS).get(cres).get("cleanup.policy");
            expectEqual("compact,delete", e.value(), "cleanup.policy after APPEND delete");
        });
        check("admin: deleteTopics, then listTopics no longer names it", () -> {
            admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
            Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            expect(!names.contains(topic), "listTopics still names %s: %s", topic, names);
        });
    }

    private void adminCluster(Admin admin) {
        check("admin: describeCluster lists " + brokers + " node(s), a controller among them and a cluster id", () -> {
            DescribeClusterResult r = admin.describeCluster();
            Collection<Node> nodes = r.nodes().get(30, TimeUnit.SECONDS);
            Node controller = r.controller().get(30, TimeUnit.SECONDS);
            String id = r.clusterId().get(30, TimeUnit.SECONDS);
            expectEqual(brokers, nodes.size(), "nodes (" + nodes + ")");
            expect(controller != null && nodes.contains(controller), "controller %s not among %s", controller, nodes);
            expect(id != null && !id.isEmpty(), "cluster id %s", id);
        });
    }

    private void adminGroups(Admin admin) {
        String topic = "admin-groups";
        String group = "java-admin-group";
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        check("admin: alterConsumerGroupOffsets creates the group's offsets; listConsumerGroupOffsets reads them", () -> {
            createTopic(admin, topic, 2);
            List<ProducerRecord<String, String>> rs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                rs.add(new ProducerRecord<>(topic, i % 2, null, "a" + i));
            }
            produce("none", rs);
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(2, "meta"), p1, new OffsetAndMetadata(4)))
                    .all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> got =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            expectEqual(2L, got.get(p0).offset(), "offset of partition 0");
            expectEqual("meta", got.get(p0).metadata(), "metadata of partition 0");
            expectEqual(4L, got.get(p1).offset(), "offset of partition 1");
        });
        check("admin: listGroups names the groups of this run with their types", () -> {
            Collection<GroupListing> all = admin.listGroups().all().get(30, TimeUnit.SECONDS);
            Map<String, String> types = new TreeMap<>();
            for (GroupListing g : all) {
                types.put(g.groupId(), g.type().map(Object::toString).orElse("?"));
            }
            expectEqual("Classic", types.get("java-classic"), "type of java-classic (" + types + ")");
            expectEqual("Consumer", types.get("java-consumer"), "type of java-consumer (" + types + ")");
            expect(types.containsKey(group), "%s not listed: %s", group, types);
        });
        check("admin: deleteConsumerGroupOffsets drops partition 0's offset and keeps partition 1's", () -> {
            admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> got =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            expect(got.get(p0) == null, "partition 0 still has %s", got.get(p0));
            expectEqual(4L, got.get(p1).offset(), "offset of partition 1");
        });
        check("admin: deleteConsumerGroups, then listGroups no longer names it", () -> {
            admin.deleteConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS);
            Set<String> ids = admin.listGroups().all().get(30, TimeUnit.SECONDS).stream()
                    .map(GroupListing::groupId).collect(Collectors.toSet());
            expect(!ids.contains(group), "%s still listed: %s", group, ids);
        });
    }

    private void deleteRecords(Admin admin) {
        String topic = "delete-records";
        TopicPartition tp = new TopicPartition(topic, 0);
        check("admin: deleteRecords before offset 4 of 10: low watermark 4, earliest offset 4, reads start there", () -> {
            createTopic(admin, topic, 1);
            List<ProducerRecord<String, String>> rs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                rs.add(new ProducerRecord<>(topic, 0, "k" + i, "d" + i));
            }
            produce("none", rs);
            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp)
                    .get(30, TimeUnit.SECONDS).lowWatermark();
            expectEqual(4L, low, "low watermark");
            long earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
            expectEqual(4L, earliest, "earliest offset");
            List<Long> offsets = readAll(List.of(tp)).stream().map(ConsumerRecord::offset).collect(Collectors.toList());
            expectEqual(List.of(4L, 5L, 6L, 7L, 8L, 9L), offsets, "offsets read from the beginning");
        });
    }

    /**
     * Without --sasl there is no connected user: the gateway describes every user's credentials
     * and sets none (CLUSTER_AUTHORIZATION_FAILED), where Kafka would let an authorized client
     * set any user's. Kafka describes no user here either (none has credentials).
     */
    /**
     * Without --sasl every connection acts as the gateway's own Iggy login and there are no
     * users: the ACL APIs answer SECURITY_DISABLED, as Kafka without an authorizer does.
     */
    private void aclsUnauthenticated(Admin admin) {
        check("admin: without SASL, describeAcls is SecurityDisabledException (no users to show)", () -> {
            try {
                admin.describeAcls(org.apache.kafka.common.acl.AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS);
                throw new AssertionError("answered");
            } catch (ExecutionException e) {
                expect(e.getCause() instanceof org.apache.kafka.common.errors.SecurityDisabledException,
                        "want SecurityDisabledException, got %s", e.getCause());
            }
        });
    }

    private void scramUnauthenticated(Admin admin) {
        check("admin: without SASL, describeUserScramCredentials answers and alterUserScramCredentials is ClusterAuthorizationException", () -> {
            admin.describeUserScramCredentials().all().get(30, TimeUnit.SECONDS);
            try {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("iggy",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "secret"))).all().get(30, TimeUnit.SECONDS);
                throw new AssertionError("accepted");
            } catch (ExecutionException e) {
                expect(e.getCause() instanceof ClusterAuthorizationException,
                        "want ClusterAuthorizationException, got %s", e.getCause());
            }
        });
    }

    private static Properties saslProps(Properties p, String mechanism, String user, String password) {
        String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        p.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    private void scram() {
        check("SASL PLAIN as iggy: alterUserScramCredentials sets SCRAM-SHA-256 and SCRAM-SHA-512, describe lists both", () -> {
            try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), "PLAIN", "iggy", "iggy"))) {
                a.alterUserScramCredentials(List.of(
                        new UserScramCredentialUpsertion("iggy", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "java-256"),
                        new UserScramCredentialUpsertion("iggy", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "java-512")))
                        .all().get(30, TimeUnit.SECONDS);
                Map<String, UserScramCredentialsDescription> d = a.describeUserScramCredentials(List.of("iggy")).all().get(30, TimeUnit.SECONDS);
                List<String> got = d.get("iggy").credentialInfos().stream()
                        .map(ci -> ci.mechanism() + "/" + ci.iterations()).sorted().collect(Collectors.toList());
                expectEqual(List.of("SCRAM_SHA_256/4096", "SCRAM_SHA_512/8192"), got, "credentials of iggy");
            }
        });
        for (String mech : List.of("SCRAM-SHA-256", "SCRAM-SHA-512")) {
            String password = mech.endsWith("256") ? "java-256" : "java-512";
            check(mech + " as iggy with the new password: describeCluster and a topic round trip", () -> {
                try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), mech, "iggy", password))) {
                    expectEqual(1, a.describeCluster().nodes().get(30, TimeUnit.SECONDS).size(), "nodes");
                    String topic = "scram-" + mech.toLowerCase();
                    a.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
                    expect(a.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic), "topic %s not listed", topic);
                }
            });
        }
        if (provisionedUser != null) {
            scramProvisioned();
        }
        if (aclUser != null) {
            acls();
        }
        check("SCRAM-SHA-256 with a wrong password is refused (SaslAuthenticationException)", () -> {
            try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), "SCRAM-SHA-256", "iggy", "wrong"))) {
                a.describeCluster().nodes().get(30, TimeUnit.SECONDS);
                throw new AssertionError("authenticated");
            } catch (ExecutionException e) {
                expect(e.getCause() instanceof org.apache.kafka.common.errors.SaslAuthenticationException,
                        "want SaslAuthenticationException, got %s", e.getCause());
            }
        });
    }

    /**
     * The administrator iggy (Iggy's manage-users) provisions another Iggy user's SCRAM-SHA-256
     * and SCRAM-SHA-512 credentials with kafka-configs, as an operator provisions Kafka users;
     * the user then authenticates with each, produces to a topic it may write and is refused
     * creating one (its Iggy permissions, which the gateway checks for it).
     */
    private void scramProvisioned() {
        String user = provisionedUser;
        check("kafka-configs --alter --add-config SCRAM-SHA-256=[...],SCRAM-SHA-512=[...] --entity-type users --entity-name " + user
                + " as the administrator iggy, then describeUserScramCredentials lists both", () -> {
            Path props = Files.createTempFile("iggy-admin", ".properties");
            Properties p = saslProps(new Properties(), "PLAIN", "iggy", "iggy");
            try (OutputStream out = Files.newOutputStream(props)) {
                p.store(out, null);
            }
            String configs = "org.apache.kafka.tools.ConfigCommand";
            Run r = tool(null, configs, "--bootstrap-server", saslBootstrap, "--command-config", props.toString(),
                    "--alter", "--add-config", "SCRAM-SHA-256=[iterations=4096,password=prov-256],SCRAM-SHA-512=[password=prov-512]",
                    "--entity-type", "users", "--entity-name", user);
            ok(r);
            // kafka-configs --describe --entity-type users also reads client quotas, which the
            // gateway does not serve: the Admin client reads the credentials back.
            try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), "PLAIN", "iggy", "iggy"))) {
                Map<String, UserScramCredentialsDescription> d = a.describeUserScramCredentials(List.of(user)).all().get(30, TimeUnit.SECONDS);
                List<String> got = d.get(user).credentialInfos().stream()
                        .map(ci -> ci.mechanism() + "/" + ci.iterations()).sorted().collect(Collectors.toList());
                expectEqual(List.of("SCRAM_SHA_256/4096", "SCRAM_SHA_512/4096"), got, "credentials of " + user);
            }
        });
        for (String mech : List.of("SCRAM-SHA-256", "SCRAM-SHA-512")) {
            String password = mech.endsWith("256") ? "prov-256" : "prov-512";
            String topic = "scram-" + mech.toLowerCase();
            check(mech + " as " + user + " (provisioned): produces to " + topic + ", creating a topic is TopicAuthorizationException", () -> {
                Properties pp = saslProps(producerProps("none"), mech, user, password);
                pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, saslBootstrap);
                try (KafkaProducer<String, String> prod = new KafkaProducer<>(pp)) {
                    prod.send(new ProducerRecord<>(topic, "k", "from " + user)).get(30, TimeUnit.SECONDS);
                }
                try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), mech, user, password))) {
                    a.createTopics(List.of(new NewTopic("not-" + user + "-" + mech.toLowerCase(), 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
                    throw new AssertionError("created a topic without the permission");
                } catch (ExecutionException e) {
                    expect(e.getCause() instanceof org.apache.kafka.common.errors.TopicAuthorizationException,
                            "want TopicAuthorizationException, got %s", e.getCause());
                }
            });
        }
    }

    /**
     * ACLs over Iggy's permissions, as the administrator iggy: kafka-acls --add grants the Iggy
     * user of --acl-user (no permissions of its own) READ on a topic, --list shows it; the Admin
     * client's describeAcls lists it, a deny ACL is refused (InvalidRequestException), and
     * deleteAcls removes the grant.
     */
    private void acls() {
        String user = aclUser;
        String topic = "acl-java";
        Path[] props = new Path[1];
        String acls = "org.apache.kafka.tools.AclCommand";
        check("kafka-acls --add --allow-principal User:" + user + " --operation Read --topic " + topic + ", then --list shows it", () -> {
            props[0] = Files.createTempFile("iggy-admin", ".properties");
            Properties p = saslProps(new Properties(), "PLAIN", "iggy", "iggy");
            try (OutputStream out = Files.newOutputStream(props[0])) {
                p.store(out, null);
            }
            try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), "PLAIN", "iggy", "iggy"))) {
                a.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            ok(tool(null, acls, "--bootstrap-server", saslBootstrap, "--command-config", props[0].toString(),
                    "--add", "--allow-principal", "User:" + user, "--operation", "Read", "--topic", topic));
            Run r = tool(null, acls, "--bootstrap-server", saslBootstrap, "--command-config", props[0].toString(),
                    "--list", "--principal", "User:" + user);
            ok(r);
            expect(r.out().contains("name=" + topic) && r.out().contains("principal=User:" + user)
                    && r.out().contains("operation=READ") && r.out().contains("permissionType=ALLOW"), "%s", r.both());
        });
        check("admin: describeAcls as iggy lists java-prov's READ on " + topic + "; a deny ACL is InvalidRequestException", () -> {
            try (Admin a = Admin.create(saslProps(adminProps(saslBootstrap), "PLAIN", "iggy", "iggy"))) {
                var filter = new org.apache.kafka.common.acl.AclBindingFilter(
                        new org.apache.kafka.common.resource.ResourcePatternFilter(org.apache.kafka.common.resource.ResourceType.TOPIC, topic,
                                org.apache.kafka.common.resource.PatternType.LITERAL),
                        new org.apache.kafka.common.acl.AccessControlEntryFilter("User:" + user, null,
                                org.apache.kafka.common.acl.AclOperation.READ, org.apache.kafka.common.acl.AclPermissionType.ANY));
                var got = a.describeAcls(filter).values().get(30, TimeUnit.SECONDS);
                expectEqual(1, got.size(), "ACLs matched " + got);
                var deny = new org.apache.kafka.common.acl.AclBinding(
                        new org.apache.kafka.common.resource.ResourcePattern(org.apache.kafka.common.resource.ResourceType.TOPIC, topic,
                                org.apache.kafka.common.resource.PatternType.LITERAL),
                        new org.apache.kafka.common.acl.AccessControlEntry("User:" + user, "*",
                                org.apache.kafka.common.acl.AclOperation.WRITE, org.apache.kafka.common.acl.AclPermissionType.DENY));
                try {
                    a.createAcls(List.of(deny)).all().get(30, TimeUnit.SECONDS);
                    throw new AssertionError("a deny ACL was accepted");
                } catch (ExecutionException e) {
                    expect(e.getCause() instanceof org.apache.kafka.common.errors.InvalidRequestException
                            && e.getCause().getMessage().contains("deny"), "want InvalidRequestException about deny, got %s", e.getCause());
                }
                var deleted = a.deleteAcls(List.of(filter)).all().get(30, TimeUnit.SECONDS);
                expectEqual(1, deleted.size(), "ACLs deleted " + deleted);
                expectEqual(0, a.describeAcls(filter).values().get(30, TimeUnit.SECONDS).size(), "ACLs after the deletion");
            }
        });
    }

    // --- what the gateway does not offer ----------------------------------------------------

    /**
     * Requests the gateway does not serve are not in its ApiVersions answer, so the client
     * refuses them itself at once with UnsupportedVersionException, as against a Kafka broker
     * without them; without --transactions, transactions are not offered (FindCoordinator for
     * a transactional id) and listTransactions is not advertised.
     */
    private void unsupported(Admin admin) {
        Map<String, KafkaFutureSupplier> calls = new LinkedHashMap<>();
        // The fleet's node ids, not Kafka's 0: the request goes to brokers that exist.
        calls.put("describeLogDirs", () -> admin.describeLogDirs(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
                .map(Node::id).collect(Collectors.toList())).allDescriptions());
        calls.put("describeMetadataQuorum", () -> admin.describeMetadataQuorum().quorumInfo());
        if (!transactions) {
            calls.put("listTransactions", () -> admin.listTransactions().all());
        }
        for (var call : calls.entrySet()) {
            check("admin: " + call.getKey() + " is refused at once with UnsupportedVersionException (not offered)", () -> {
                long t0 = System.nanoTime();
                try {
                    call.getValue().get().get(30, TimeUnit.SECONDS);
                    throw new AssertionError("answered");
                } catch (ExecutionException e) {
                    expect(e.getCause() instanceof org.apache.kafka.common.errors.UnsupportedVersionException,
                            "want UnsupportedVersionException, got %s", e.getCause());
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                expect(ms < 5000, "took %d ms", ms);
            });
        }
        if (transactions) {
            return;
        }
        check("a transactional producer's initTransactions fails at once with TransactionalIdAuthorizationException (transactions are not offered)", () -> {
            Properties p = producerProps("none");
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "java-tx");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
            long t0 = System.nanoTime();
            try (KafkaProducer<String, String> tx = new KafkaProducer<>(p)) {
                tx.initTransactions();
                throw new AssertionError("initTransactions returned");
            } catch (org.apache.kafka.common.KafkaException e) {
                long ms = (System.nanoTime() - t0) / 1_000_000;
                expect(e instanceof org.apache.kafka.common.errors.TransactionalIdAuthorizationException,
                        "want TransactionalIdAuthorizationException, got %s", e);
                expect(ms < 5000, "took %d ms: %s", ms, e);
            }
        });
    }

    @FunctionalInterface
    private interface KafkaFutureSupplier {
        org.apache.kafka.common.KafkaFuture<?> get() throws Exception;
    }

    // --- the command-line tools -------------------------------------------------------------

    record Run(int status, String out, String err) {
        String both() {
            return "exit status " + status + "\nstdout:\n" + out + "\nstderr:\n" + tail(err);
        }

        private static String tail(String s) {
            String[] lines = s.split("\n");
            return String.join("\n", Arrays.copyOfRange(lines, Math.max(0, lines.length - 15), lines.length));
        }
    }

    /** Runs a tool's main class as kafka-*.sh does: a JVM of its own over the tools' jars. */
    Run tool(String stdin, String mainClass, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        if (toolsArchive != null) {
            cmd.add((Files.exists(toolsArchive) ? "-XX:SharedArchiveFile=" : "-XX:ArchiveClassesAtExit=") + toolsArchive);
        }
        cmd.addAll(List.of("-cp", toolsClasspath, mainClass));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.PIPE).start();
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread errReader = new Thread(() -> copy(p.getErrorStream(), err));
        errReader.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        copy(p.getInputStream(), out);
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(mainClass + " did not finish within 90 s");
        }
        errReader.join();
        return new Run(p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            // the process ended: what was read is what there is
        }
    }

    static void ok(Run r) {
        expect(r.status() == 0, "%s", r.both());
    }

    /**
     * The rows of a table the tools print (kafka-consumer-groups): the header line that starts
     * with {@code first}, and each following non-empty line as column name to value.
     */
    static List<Map<String, String>> table(String out, String first) {
        List<Map<String, String>> rows = new ArrayList<>();
        String[] header = null;
        for (String line : out.split("\n")) {
            String[] cols = line.trim().split("\\s+");
            if (line.trim().isEmpty()) {
                continue;
            }
            if (cols[0].equals(first)) {
                header = cols;
                continue;
            }
            if (header != null && cols.length >= header.length - 3) {
                Map<String, String> row = new LinkedHashMap<>();
                for (int i = 0; i < header.length && i < cols.length; i++) {
                    row.put(header[i], cols[i]);
                }
                rows.add(row);
            }
        }
        return rows;
    }

    /** partition -> the value of column {@code col} for the rows of {@code topic}. */
    private static Map<Integer, String> column(List<Map<String, String>> rows, String topic, String col) {
        Map<Integer, String> out = new TreeMap<>();
        for (Map<String, String> row : rows) {
            if (topic.equals(row.get("TOPIC"))) {
                out.put(Integer.parseInt(row.get("PARTITION")), row.get(col));
            }
        }
        return out;
    }

    private void tools(Admin admin) throws Exception {
        String topics = "org.apache.kafka.tools.TopicCommand";
        String configs = "org.apache.kafka.tools.ConfigCommand";
        String groups = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
        String topic = "tools-topic";

        check("kafka-topics --create --partitions 2 --config cleanup.policy=compact, --describe: PartitionCount 2, --list names it", () -> {
            Run r = tool(null, topics, "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "2",
                    "--config", "cleanup.policy=compact");
            ok(r);
            expect(r.out().contains("Created topic " + topic + "."), "%s", r.both());
            r = tool(null, topics, "--bootstrap-server", bootstrap, "--describe", "--topic", topic);
            ok(r);
            expect(r.out().contains("PartitionCount: 2") && r.out().contains("cleanup.policy=compact"), "%s", r.both());
            expect(r.out().lines().filter(l -> l.contains("Partition: ")).count() == 2, "want 2 partition lines: %s", r.both());
            r = tool(null, topics, "--bootstrap-server", bootstrap, "--list");
            ok(r);
            expect(r.out().lines().anyMatch(topic::equals), "%s", r.both());
        });
        // Every topic is described, the internal __consumer_offsets too (its configs, as Kafka
        // creates it: the gateway keeps group state in its coordinator log, not in a topic).
        check("kafka-topics --describe of every topic: this one and __consumer_offsets (16 partitions, cleanup.policy=compact)", () -> {
            Run r = tool(null, topics, "--bootstrap-server", bootstrap, "--describe");
            ok(r);
            expect(r.out().lines().anyMatch(l -> l.startsWith("Topic: " + topic + "\t") && l.contains("PartitionCount: 2")), "%s", r.both());
            expect(r.out().lines().anyMatch(l -> l.startsWith("Topic: __consumer_offsets\t") && l.contains("PartitionCount: 16")
                    && l.contains("cleanup.policy=compact")), "%s", r.both());
        });
        check("kafka-topics --alter --partitions 3, then --describe: PartitionCount 3", () -> {
            ok(tool(null, topics, "--bootstrap-server", bootstrap, "--alter", "--topic", topic, "--partitions", "3"));
            Run r = tool(null, topics, "--bootstrap-server", bootstrap, "--describe", "--topic", topic);
            ok(r);
            expect(r.out().contains("PartitionCount: 3"), "%s", r.both());
        });
        check("kafka-configs --alter --add-config retention.ms,max.message.bytes, then --describe shows them and cleanup.policy", () -> {
            Run r = tool(null, configs, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", topic,
                    "--alter", "--add-config", "retention.ms=7200000,max.message.bytes=300000");
            ok(r);
            expect(r.out().contains("Completed updating config for topic " + topic + "."), "%s", r.both());
            r = tool(null, configs, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", topic, "--describe");
            ok(r);
            expect(r.out().contains("retention.ms=7200000") && r.out().contains("max.message.bytes=300000")
                    && r.out().contains("cleanup.policy=compact"), "%s", r.both());
        });
        check("kafka-configs --alter --delete-config retention.ms, then --describe no longer lists it", () -> {
            ok(tool(null, configs, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", topic,
                    "--alter", "--delete-config", "retention.ms"));
            Run r = tool(null, configs, "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", topic, "--describe");
            ok(r);
            expect(!r.out().contains("retention.ms=") && r.out().contains("max.message.bytes=300000"), "%s", r.both());
        });

        String console = "console";
        check("kafka-console-producer (keys, 6 lines) then kafka-console-consumer --from-beginning reads the same 6", () -> {
            createTopic(admin, console, 1);
            StringBuilder in = new StringBuilder();
            List<String> want = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                in.append("ck").append(i).append(":cv").append(i).append('\n');
                want.add("ck" + i + ":cv" + i);
            }
            ok(tool(in.toString(), "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap, "--topic", console,
                    "--reader-property", "parse.key=true", "--reader-property", "key.separator=:"));
            Run r = tool(null, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap, "--topic", console,
                    "--from-beginning", "--max-messages", "6", "--timeout-ms", "30000",
                    "--formatter-property", "print.key=true", "--formatter-property", "key.separator=:");
            ok(r);
            expectEqual(want, r.out().lines().collect(Collectors.toList()), "console consumer output");
        });
        check("kafka-get-offsets: the latest offset (6) and, after deleting 2 records, the earliest (2)", () -> {
            String get = "org.apache.kafka.tools.GetOffsetShell";
            Run r = tool(null, get, "--bootstrap-server", bootstrap, "--topic", console);
            ok(r);
            expectEqual(console + ":0:6", r.out().trim(), "latest");
            TopicPartition tp = new TopicPartition(console, 0);
            admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(2))).all().get(30, TimeUnit.SECONDS);
            r = tool(null, get, "--bootstrap-server", bootstrap, "--topic", console, "--time", "-2");
            ok(r);
            expectEqual(console + ":0:2", r.out().trim(), "earliest");
        });
        // Without --topic every partition of every topic, __consumer_offsets's answered as empty
        // partitions: what a Kafka client can read of it through the gateway.
        check("kafka-get-offsets of every topic: this one at 6, __consumer_offsets's 16 partitions at 0", () -> {
            Run r = tool(null, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap);
            ok(r);
            List<String> lines = r.out().lines().collect(Collectors.toList());
            expect(lines.contains(console + ":0:6"), "%s", r.both());
            expectEqual(16L, lines.stream().filter(l -> l.matches("__consumer_offsets:\\d+:0")).count(), "__consumer_offsets lines\n" + r.out());
        });

        consumerGroupsTool(admin, groups);
        perfTools();

        check("kafka-topics --delete, then --list no longer names it", () -> {
            ok(tool(null, topics, "--bootstrap-server", bootstrap, "--delete", "--topic", topic));
            Run r = tool(null, topics, "--bootstrap-server", bootstrap, "--list");
            ok(r);
            expect(r.out().lines().noneMatch(topic::equals), "%s", r.both());
        });
    }

    /**
     * kafka-consumer-groups over a group with committed offsets 4 and 6 on two partitions of 10
     * records each, whose records were produced at known times one second apart.
     */
    private void consumerGroupsTool(Admin admin, String groups) {
        String topic = "tools-groups";
        String group = "tools-group";
        long base = Instant.now().minusSeconds(3600).toEpochMilli() / 1000 * 1000;
        check("kafka-consumer-groups --list and --describe: the committed offsets, log end offsets and lag", () -> {
            createTopic(admin, topic, 2);
            List<ProducerRecord<String, String>> rs = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < 10; i++) {
                    rs.add(new ProducerRecord<>(topic, p, base + i * 1000L, "k" + i, "g" + p + "-" + i));
                }
            }
            produce("none", rs);
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(4),
                    new TopicPartition(topic, 1), new OffsetAndMetadata(6))).all().get(30, TimeUnit.SECONDS);
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--list");
            ok(r);
            expect(r.out().lines().anyMatch(group::equals), "%s", r.both());
            r = tool(null, groups, "--bootstrap-server", bootstrap, "--describe", "--group", group);
            ok(r);
            List<Map<String, String>> rows = table(r.out(), "GROUP");
            expectEqual(Map.of(0, "4", 1, "6"), column(rows, topic, "CURRENT-OFFSET"), "CURRENT-OFFSET\n" + r.out());
            expectEqual(Map.of(0, "10", 1, "10"), column(rows, topic, "LOG-END-OFFSET"), "LOG-END-OFFSET\n" + r.out());
            expectEqual(Map.of(0, "6", 1, "4"), column(rows, topic, "LAG"), "LAG\n" + r.out());
        });
        check("kafka-consumer-groups --reset-offsets --to-earliest --dry-run shows 0 and changes nothing; --execute sets 0", () -> {
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group, "--topic", topic,
                    "--to-earliest", "--dry-run");
            ok(r);
            expectEqual(Map.of(0, "0", 1, "0"), column(table(r.out(), "GROUP"), topic, "NEW-OFFSET"), "NEW-OFFSET\n" + r.out());
            expectEqual(Map.of(0, 4L, 1, 6L), committed(admin, group), "committed after --dry-run");
            r = tool(null, groups, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group, "--topic", topic,
                    "--to-earliest", "--execute");
            ok(r);
            expectEqual(Map.of(0, "0", 1, "0"), column(table(r.out(), "GROUP"), topic, "NEW-OFFSET"), "NEW-OFFSET\n" + r.out());
            expectEqual(Map.of(0, 0L, 1, 0L), committed(admin, group), "committed after --execute");
        });
        check("kafka-consumer-groups --reset-offsets --to-datetime (the 6th record's time) --execute sets 5", () -> {
            String when = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS").withZone(ZoneOffset.UTC)
                    .format(Instant.ofEpochMilli(base + 5000)) + "Z";
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group, "--topic", topic,
                    "--to-datetime", when, "--execute");
            ok(r);
            expectEqual(Map.of(0, "5", 1, "5"), column(table(r.out(), "GROUP"), topic, "NEW-OFFSET"), "NEW-OFFSET (" + when + ")\n" + r.out());
            expectEqual(Map.of(0, 5L, 1, 5L), committed(admin, group), "committed");
        });
        check("kafka-consumer-groups --reset-offsets --shift-by -2 --dry-run shows 3, --execute sets 3", () -> {
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group, "--topic", topic,
                    "--shift-by", "-2", "--dry-run");
            ok(r);
            expectEqual(Map.of(0, "3", 1, "3"), column(table(r.out(), "GROUP"), topic, "NEW-OFFSET"), "NEW-OFFSET\n" + r.out());
            expectEqual(Map.of(0, 5L, 1, 5L), committed(admin, group), "committed after --dry-run");
            ok(tool(null, groups, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group, "--topic", topic,
                    "--shift-by", "-2", "--execute"));
            expectEqual(Map.of(0, 3L, 1, 3L), committed(admin, group), "committed after --execute");
        });
        check("kafka-consumer-groups --delete-offsets --topic: the group keeps no offset of the topic", () -> {
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--delete-offsets", "--group", group, "--topic", topic);
            ok(r);
            expectEqual(Map.of(), committed(admin, group), "committed after --delete-offsets\n" + r.out());
        });
        check("kafka-consumer-groups --delete --group: the group is gone from --list", () -> {
            ok(tool(null, groups, "--bootstrap-server", bootstrap, "--delete", "--group", group));
            Run r = tool(null, groups, "--bootstrap-server", bootstrap, "--list");
            ok(r);
            expect(r.out().lines().noneMatch(group::equals), "%s", r.both());
        });
    }

    private static Map<Integer, Long> committed(Admin admin, String group) throws Exception {
        Map<Integer, Long> out = new TreeMap<>();
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                .forEach((tp, om) -> {
                    if (om != null) {
                        out.put(tp.partition(), om.offset());
                    }
                });
        return out;
    }

    private void perfTools() {
        String topic = "perf";
        int n = 20000;
        check("kafka-producer-perf-test: " + n + " records of 100 bytes, acks=all", () -> {
            Run r = tool(null, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", Integer.toString(n),
                    "--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bootstrap, "acks=all");
            ok(r);
            expect(r.out().lines().anyMatch(l -> l.startsWith(n + " records sent")), "%s", r.both());
        });
        check("kafka-consumer-perf-test: consumes the " + n + " records", () -> {
            Run r = tool(null, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bootstrap, "--topic", topic,
                    "--num-records", Integer.toString(n), "--timeout", "30000");
            ok(r);
            List<String> lines = r.out().lines().dropWhile(l -> !l.startsWith("start.time,")).collect(Collectors.toList());
            expect(lines.size() >= 2, "%s", r.both());
            List<String> header = Arrays.stream(lines.get(0).split(",")).map(String::trim).collect(Collectors.toList());
            List<String> values = Arrays.stream(lines.get(1).split(",")).map(String::trim).collect(Collectors.toList());
            int col = header.indexOf("data.consumed.in.nMsg");
            expect(col >= 0 && col < values.size(), "no data.consumed.in.nMsg column: %s", r.both());
            expectEqual(Integer.toString(n), values.get(col), "data.consumed.in.nMsg");
        });
    }

    // --- a group through the loss of its coordinator ----------------------------------------

    /** Polls until {@code cond} holds, failing with {@code what} after {@code limit}. */
    static void waitFor(String what, Duration limit, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit + ": " + what);
            }
            Thread.sleep(50);
        }
    }

    /** One group member polling in a thread of its own: what it read, its rebalance callbacks. */
    private final class Member {
        final String group;
        final Set<String> read = ConcurrentHashMap.newKeySet();
        final AtomicInteger assigned = new AtomicInteger();
        final AtomicInteger revoked = new AtomicInteger();
        final AtomicInteger lost = new AtomicInteger();
        final List<String> errors = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Member(String topic, String group, String protocol) {
            this.group = group;
            thread = new Thread(() -> poll(topic, protocol), "member-" + group);
            thread.start();
        }

        private void poll(String topic, String protocol) {
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(group, protocol))) {
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    // Leaving the group at the end revokes: only what happens before counts.
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty() && !stop.get()) {
                            revoked.addAndGet(ps.size());
                        }
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        assigned.addAndGet(ps.size());
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty() && !stop.get()) {
                            lost.addAndGet(ps.size());
                        }
                    }
                });
                while (!stop.get()) {
                    ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> r : rs) {
                        read.add(r.value());
                    }
                    if (!rs.isEmpty()) {
                        try {
                            c.commitSync(WAIT);
                        } catch (RuntimeException e) {
                            errors.add("commit: " + e);
                        }
                    }
                }
            } catch (RuntimeException e) {
                errors.add(e.toString());
            }
        }

        void close() throws InterruptedException {
            stop.set(true);
            thread.join(WAIT.toMillis() * 2);
        }
    }

    /** The idempotent producer writing one record every 5 ms round robin, in a thread of its own. */
    private final class Writer {
        final Set<String> acked = ConcurrentHashMap.newKeySet();
        final List<String> errors = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Writer(String topic, int partitions) {
            thread = new Thread(() -> {
                try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps("lz4"))) {
                    for (int i = 0; !stop.get(); i++) {
                        String v = "f" + i;
                        p.send(new ProducerRecord<>(topic, i % partitions, null, v), (md, e) -> {
                            if (e == null) {
                                acked.add(v);
                            } else {
                                errors.add(v + ": " + e);
                            }
                        });
                        Thread.sleep(5); // the pace of the writes, not a wait for anything
                    }
                    p.flush();
                } catch (InterruptedException | RuntimeException e) {
                    errors.add(e.toString());
                }
            }, "writer");
            thread.start();
        }

        void close() throws InterruptedException {
            stop.set(true);
            thread.join(WAIT.toMillis() * 2);
        }
    }

    static int coordinator(Admin admin, String group) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).coordinator().id();
    }

    /** Waits until both members read every record acknowledged so far and 100 more were acked. */
    private static void readOn(Writer w, List<Member> members) throws InterruptedException {
        int mark = w.acked.size() + 100;
        waitFor("100 more records acknowledged (" + w.acked.size() + " of " + mark + "; " + w.errors + ")",
                Duration.ofSeconds(30), () -> w.acked.size() >= mark);
        Set<String> want = Set.copyOf(w.acked);
        for (Member m : members) {
            waitFor(m.group + " read every record acknowledged (" + want.stream().filter(v -> !m.read.contains(v)).count()
                    + " missing; " + m.errors + ")", Duration.ofSeconds(30), () -> m.read.containsAll(want));
        }
    }

    /**
     * A classic group and a KIP-848 group read a 6-partition topic that an idempotent producer
     * writes every 5 ms; the gateway coordinating the classic group is stopped with SIGTERM,
     * then the one coordinating the KIP-848 group with SIGKILL. The gateways hand their groups
     * over without a rebalance: no member sees a revocation or a lost partition, and every
     * acknowledged record is read.
     */
    private void failover(Admin admin) throws Exception {
        String topic = "failover";
        String classic = "java-failover-classic";
        String consumer = "java-failover-consumer";
        createTopic(admin, topic, 6);
        Writer w = new Writer(topic, 6);
        List<Member> members = List.of(new Member(topic, classic, "classic"), new Member(topic, consumer, "consumer"));
        try {
            check("failover: a classic and a KIP-848 group each hold the 6 partitions and read what is produced", () -> {
                for (Member m : members) {
                    waitFor(m.group + " assigned 6 partitions (" + m.assigned.get() + "; " + m.errors + ")", WAIT, () -> m.assigned.get() == 6);
                }
                readOn(w, members);
            });
            String[] how = {"SIGTERM", "SIGKILL"};
            String[] whose = {classic, consumer};
            for (int i = 0; i < 2; i++) {
                String signal = how[i];
                String group = whose[i];
                check("failover: " + signal + " of the gateway coordinating " + group + "; both groups read on", () -> {
                    int node = coordinator(admin, group);
                    Long pid = nodePids.get(node);
                    expect(pid != null, "coordinator %d is not a gateway of %s", node, nodePids);
                    ProcessHandle h = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("gateway " + node + " is not running"));
                    boolean sent = signal.equals("SIGTERM") ? h.destroy() : h.destroyForcibly();
                    expect(sent, "%s not sent to gateway %d", signal, node);
                    h.onExit().get(30, TimeUnit.SECONDS);
                    readOn(w, members);
                    int now = coordinator(admin, group);
                    expect(now != node, "%s still names gateway %d its coordinator", group, node);
                });
            }
            w.close();
            check("failover: every acknowledged record read by both groups, no producer error", () -> {
                expect(w.errors.isEmpty(), "producer errors: %s", w.errors);
                Set<String> want = Set.copyOf(w.acked);
                for (Member m : members) {
                    waitFor(m.group + " read every acknowledged record (" + want.stream().filter(v -> !m.read.contains(v)).count()
                            + " of " + want.size() + " missing)", WAIT, () -> m.read.containsAll(want));
                }
            });
        } finally {
            w.close();
            for (Member m : members) {
                m.close();
            }
        }
        for (Member m : members) {
            check("failover: " + m.group + " saw no revocation and no lost partition, its commits all went through", () -> {
                expectEqual(0, m.revoked.get(), "partitions revoked");
                expectEqual(0, m.lost.get(), "partitions lost");
                expectEqual(6, m.assigned.get(), "partitions assigned in all");
                expect(m.errors.isEmpty(), "errors: %s", m.errors);
            });
        }
    }
}
