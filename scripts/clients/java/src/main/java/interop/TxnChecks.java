package interop;

import static interop.JavaInterop.WAIT;
import static interop.JavaInterop.expect;
import static interop.JavaInterop.expectEqual;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;

/**
 * The Java client's transactional producer against a gateway started with
 * {@code --transactions}: commit and abort seen by read_committed and read_uncommitted
 * consumers, a consumer group's offsets sent in the transaction (KIP-447, with the consumer's
 * group metadata), a second instance of a transactional id fencing the first, a transaction left
 * open past its {@code transaction.timeout.ms} aborted by the gateway (how long after its
 * deadline is printed), and Kafka's {@code kafka-transactions} tool (list, describe,
 * describe-producers, find-hanging) over an open transaction, its output checked against what
 * the producer did, and its {@code abort} of a transaction whose producer went away.
 */
final class TxnChecks {
    private static final String TOOL = "org.apache.kafka.tools.TransactionsCommand";

    private final JavaInterop t;

    TxnChecks(JavaInterop t) {
        this.t = t;
    }

    void run(Admin admin) {
        commitAndAbort(admin);
        for (String protocol : List.of("classic", "consumer")) {
            offsetsInTransaction(admin, protocol);
        }
        fenced(admin);
        tools(admin);
        abortHanging(admin);
        timeout(admin);
    }

    private Properties txProps(String id, int timeoutMs) {
        Properties p = t.producerProps("lz4");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, Integer.toString(timeoutMs));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return p;
    }

    /** Reads the partitions from their start to their end offsets at the isolation level: value per record, in offset order per partition. */
    private List<String> read(Collection<TopicPartition> parts, String isolation) {
        Properties p = t.consumerProps(null, null);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(parts);
            c.seekToBeginning(parts);
            // read_committed: the end is the last stable offset.
            Map<TopicPartition, Long> end = c.endOffsets(parts, WAIT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (parts.stream().anyMatch(tp -> c.position(tp, WAIT) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(isolation + ": not at the end offsets " + end + " within " + WAIT + "; read " + out);
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                }
            }
        }
        return out;
    }

    private static List<String> sorted(List<String> l) {
        return l.stream().sorted().collect(Collectors.toList());
    }

    private static List<String> values(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    private static void send(KafkaProducer<String, String> p, String topic, int partitions, List<String> vals) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = 0; i < vals.size(); i++) {
            fs.add(p.send(new ProducerRecord<>(topic, i % partitions, "k" + i, vals.get(i))));
        }
        p.flush();
        for (var f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
    }

    private static Map<TopicPartition, Long> latest(Admin admin, List<TopicPartition> parts) throws Exception {
        Map<TopicPartition, Long> out = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (var e : admin.listOffsets(parts.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
                .all().get(30, TimeUnit.SECONDS).entrySet()) {
            out.put(e.getKey(), e.getValue().offset());
        }
        return out;
    }

    // --- commit, abort, the isolation levels --------------------------------------------------

    private void commitAndAbort(Admin admin) {
        String topic = "txn-commit-abort";
        List<TopicPartition> parts = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        t.check("transactional producer: commit, abort, commit of 10 records each over 2 partitions; read_committed reads the 20 committed, "
                + "read_uncommitted all 30, each partition's end past its 3 markers", () -> {
            JavaInterop.createTopic(admin, topic, 2);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(txProps("java-txn", 60000))) {
                p.initTransactions();
                p.beginTransaction();
                send(p, topic, 2, values("c1-", 10));
                p.commitTransaction();
                p.beginTransaction();
                send(p, topic, 2, values("a-", 10));
                p.abortTransaction();
                p.beginTransaction();
                send(p, topic, 2, values("c2-", 10));
                p.commitTransaction();
            }
            List<String> committed = new ArrayList<>(values("c1-", 10));
            committed.addAll(values("c2-", 10));
            List<String> all = new ArrayList<>(committed);
            all.addAll(values("a-", 10));
            expectEqual(sorted(committed), sorted(read(parts, "read_committed")), "read_committed");
            expectEqual(sorted(all), sorted(read(parts, "read_uncommitted")), "read_uncommitted");
            // 15 records and 3 markers (commit, abort, commit) in each partition.
            Map<TopicPartition, Long> end = latest(admin, parts);
            expectEqual(List.of(18L, 18L), new ArrayList<>(end.values()), "end offsets " + end);
        });
    }

    // --- a group's offsets in the transaction (KIP-447) ---------------------------------------

    /**
     * Read-process-write over one input partition of 20 records: each poll's records are copied
     * to the output and their offsets sent in the same transaction with the consumer's group
     * metadata. The second transaction is aborted and the consumer rewinds to the group's
     * committed offset, so its records are copied again by a committed one.
     */
    private void offsetsInTransaction(Admin admin, String protocol) {
        String in = "txn-in-" + protocol;
        String out = "txn-out-" + protocol;
        String group = "java-txn-" + protocol;
        TopicPartition inTp = new TopicPartition(in, 0);
        TopicPartition outTp = new TopicPartition(out, 0);
        t.check("sendOffsetsToTransaction with the consumer's groupMetadata (group.protocol=" + protocol + "): 20 records copied "
                + "exactly once through a commit, an abort and a rewind; the group's offset moves only with commits", () -> {
            JavaInterop.createTopic(admin, in, 1);
            JavaInterop.createTopic(admin, out, 1);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(t.producerProps("none"))) {
                send(p, in, 1, values("in-", 20));
            }
            Properties cp = t.consumerProps(group, protocol);
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "7");
            List<String> abortedCopies = new ArrayList<>();
            long committedAfterFirst = -1;
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp);
                    KafkaProducer<String, String> p = new KafkaProducer<>(txProps("java-etl-" + protocol, 60000))) {
                p.initTransactions();
                c.subscribe(List.of(in));
                int transactions = 0;
                long done = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (done < 20) {
                    expect(System.nanoTime() < deadline, "copied up to offset %d of 20 within 60 s", done);
                    var recs = c.poll(Duration.ofMillis(200));
                    if (recs.isEmpty()) {
                        continue;
                    }
                    transactions++;
                    long next = -1;
                    p.beginTransaction();
                    for (ConsumerRecord<String, String> r : recs) {
                        p.send(new ProducerRecord<>(out, 0, r.key(), "out-" + r.value()));
                        next = r.offset() + 1;
                    }
                    p.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(next)), c.groupMetadata());
                    if (transactions == 2) {
                        p.flush();
                        for (ConsumerRecord<String, String> r : recs) {
                            abortedCopies.add("out-" + r.value());
                        }
                        p.abortTransaction();
                        // The group's offset is the first transaction's: the consumer rewinds to it.
                        OffsetAndMetadata at = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                                .get(30, TimeUnit.SECONDS).get(inTp);
                        expect(at != null && at.offset() == committedAfterFirst,
                                "after the abort the group's offset is %s, want the first transaction's %d", at, committedAfterFirst);
                        c.seek(inTp, at.offset());
                        continue;
                    }
                    p.commitTransaction();
                    done = next;
                    if (transactions == 1) {
                        committedAfterFirst = next;
                    }
                }
                expect(transactions >= 3, "only %d transactions: the check needs a commit, an abort and a commit", transactions);
            }
            expectEqual(values("out-in-", 20), read(List.of(outTp), "read_committed"), "read_committed output, in order");
            List<String> all = new ArrayList<>(values("out-in-", 20));
            all.addAll(abortedCopies);
            expectEqual(sorted(all), sorted(read(List.of(outTp), "read_uncommitted")), "read_uncommitted output");
            OffsetAndMetadata at = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(inTp);
            expect(at != null && at.offset() == 20, "the group's committed offset is %s, want 20", at);
        });
    }

    // --- fencing ------------------------------------------------------------------------------

    private void fenced(Admin admin) {
        String topic = "txn-fence";
        TopicPartition tp = new TopicPartition(topic, 0);
        t.check("a second producer with the same transactional.id fences the first: its commit is ProducerFencedException, "
                + "its open transaction aborted, the second's committed", () -> {
            JavaInterop.createTopic(admin, topic, 1);
            try (KafkaProducer<String, String> first = new KafkaProducer<>(txProps("java-fence", 60000))) {
                first.initTransactions();
                first.beginTransaction();
                send(first, topic, 1, List.of("first-open"));
                try (KafkaProducer<String, String> second = new KafkaProducer<>(txProps("java-fence", 60000))) {
                    second.initTransactions();
                    second.beginTransaction();
                    send(second, topic, 1, List.of("second"));
                    second.commitTransaction();
                }
                try {
                    first.commitTransaction();
                    throw new AssertionError("the fenced producer's commitTransaction returned");
                } catch (KafkaException e) {
                    expect(e instanceof ProducerFencedException, "want ProducerFencedException, got %s", e);
                }
            }
            expectEqual(List.of("second"), read(List.of(tp), "read_committed"), "read_committed");
            expectEqual(List.of("first-open", "second"), read(List.of(tp), "read_uncommitted"), "read_uncommitted");
        });
    }

    // --- kafka-transactions -------------------------------------------------------------------

    private static Map<String, String> row(List<Map<String, String>> rows, String col, String value, JavaInterop.Run r) {
        return rows.stream().filter(m -> value.equals(m.get(col))).findFirst()
                .orElseThrow(() -> new AssertionError("no row with " + col + " " + value + ":\n" + r.both()));
    }

    /**
     * An open transaction of 3 records on partition 1 of a topic whose partition 0 holds 5 records
     * of an idempotent producer: what each kafka-transactions command prints of it, then of its
     * commit.
     */
    private void tools(Admin admin) {
        String topic = "txn-tools";
        String id = "java-tools";
        t.check("kafka-transactions list, describe, describe-producers and find-hanging over an open transaction, then its commit", () -> {
            JavaInterop.createTopic(admin, topic, 2);
            try (KafkaProducer<String, String> idem = new KafkaProducer<>(t.producerProps("none"))) {
                for (int i = 0; i < 5; i++) {
                    idem.send(new ProducerRecord<>(topic, 0, "k", "idem-" + i));
                }
                idem.flush();
            }
            try (KafkaProducer<String, String> p = new KafkaProducer<>(txProps(id, 60000))) {
                p.initTransactions();
                p.beginTransaction();
                List<RecordMetadata> acks = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    acks.add(p.send(new ProducerRecord<>(topic, 1, "k", "open-" + i)).get(30, TimeUnit.SECONDS));
                }
                long sentAt = acks.get(2).timestamp();
                TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                String pid = Long.toString(d.producerId());
                String epoch = Integer.toString(d.producerEpoch());

                JavaInterop.Run r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "list");
                JavaInterop.ok(r);
                Map<String, String> listed = row(JavaInterop.table(r.out(), "TransactionalId"), "TransactionalId", id, r);
                expectEqual(pid, listed.get("ProducerId"), "list: ProducerId\n" + r.out());
                expectEqual("Ongoing", listed.get("TransactionState"), "list: TransactionState\n" + r.out());

                r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "describe", "--transactional-id", id);
                JavaInterop.ok(r);
                Map<String, String> desc = row(JavaInterop.table(r.out(), "CoordinatorId"), "TransactionalId", id, r);
                expectEqual(pid, desc.get("ProducerId"), "describe: ProducerId\n" + r.out());
                expectEqual(epoch, desc.get("ProducerEpoch"), "describe: ProducerEpoch\n" + r.out());
                expectEqual("Ongoing", desc.get("TransactionState"), "describe: TransactionState\n" + r.out());
                expectEqual("60000", desc.get("TransactionTimeoutMs"), "describe: TransactionTimeoutMs\n" + r.out());
                expectEqual(topic + "-1", desc.get("TopicPartitions"), "describe: TopicPartitions\n" + r.out());

                r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "describe-producers", "--topic", topic, "--partition", "1");
                JavaInterop.ok(r);
                Map<String, String> prod = row(JavaInterop.table(r.out(), "ProducerId"), "ProducerId", pid, r);
                expectEqual(epoch, prod.get("ProducerEpoch"), "describe-producers: ProducerEpoch\n" + r.out());
                expectEqual("2", prod.get("LastSequence"), "describe-producers: LastSequence\n" + r.out());
                expectEqual(Long.toString(sentAt), prod.get("LastTimestamp"), "describe-producers: LastTimestamp\n" + r.out());
                expectEqual(Long.toString(acks.get(0).offset()), prod.get("CurrentTransactionStartOffset"),
                        "describe-producers: CurrentTransactionStartOffset\n" + r.out());

                // Partition 0: the idempotent producer, no transaction.
                r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "describe-producers", "--topic", topic, "--partition", "0");
                JavaInterop.ok(r);
                List<Map<String, String>> rows0 = JavaInterop.table(r.out(), "ProducerId");
                expectEqual(1, rows0.size(), "describe-producers of partition 0: one producer\n" + r.out());
                expectEqual("4", rows0.get(0).get("LastSequence"), "describe-producers of partition 0: LastSequence\n" + r.out());
                expectEqual("None", rows0.get(0).get("CurrentTransactionStartOffset"), "describe-producers of partition 0\n" + r.out());

                // Open, but its coordinator holds it with this partition: not hanging.
                r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0");
                JavaInterop.ok(r);
                expectEqual(List.of(), JavaInterop.table(r.out(), "Topic"), "find-hanging rows\n" + r.out());

                p.commitTransaction();

                // After the commit, through the Admin client the tool uses.
                d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                expectEqual("COMPLETE_COMMIT", d.state().name(), "state after the commit");
                TopicPartition tp1 = new TopicPartition(topic, 1);
                List<ProducerState> ps = admin.describeProducers(List.of(tp1)).partitionResult(tp1).get(30, TimeUnit.SECONDS).activeProducers();
                expect(ps.size() == 1 && ps.get(0).producerId() == d.producerId() && ps.get(0).currentTransactionStartOffset().isEmpty(),
                        "producers of %s after the commit: %s", tp1, ps);
            }
        });
    }

    /**
     * A transactional producer that begins, writes 3 records and goes away without ending
     * (closed with a zero timeout, which leaves its transaction open, as a killed one does):
     * kafka-transactions finds it with describe-producers (and find-hanging, which leaves it out
     * while its coordinator still holds it open), and aborts it with {@code abort --topic T
     * --partition P --start-offset O} (DescribeProducers, then WriteTxnMarkers to the partition's
     * leader). Then the partition's last stable offset is its end, past the abort marker, and
     * read_committed reads none of the records.
     */
    private void abortHanging(Admin admin) {
        String topic = "txn-hanging";
        String id = "java-hanging";
        TopicPartition tp = new TopicPartition(topic, 0);
        t.check("kafka-transactions abort --topic --partition --start-offset ends a transaction left open by a producer gone without ending it", () -> {
            long checkStarted = System.nanoTime();
            JavaInterop.createTopic(admin, topic, 1);
            try (KafkaProducer<String, String> idem = new KafkaProducer<>(t.producerProps("none"))) {
                idem.send(new ProducerRecord<>(topic, 0, "k", "before")).get(30, TimeUnit.SECONDS);
            }
            long first;
            KafkaProducer<String, String> p = new KafkaProducer<>(txProps(id, 600000));
            try {
                p.initTransactions();
                p.beginTransaction();
                first = p.send(new ProducerRecord<>(topic, 0, "k", "hanging-0")).get(30, TimeUnit.SECONDS).offset();
                for (int i = 1; i < 3; i++) {
                    p.send(new ProducerRecord<>(topic, 0, "k", "hanging-" + i)).get(30, TimeUnit.SECONDS);
                }
            } finally {
                // A zero timeout does not abort the open transaction, as a graceful close would.
                p.close(Duration.ZERO);
            }
            Map<TopicPartition, Long> lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new org.apache.kafka.clients.admin.ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED))
                    .all().get(30, TimeUnit.SECONDS).entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
            expectEqual(first, lso.get(tp), "last stable offset with the transaction open");

            JavaInterop.Run r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "describe-producers", "--topic", topic, "--partition", "0");
            JavaInterop.ok(r);
            Map<String, String> open = row(JavaInterop.table(r.out(), "ProducerId"), "CurrentTransactionStartOffset", Long.toString(first), r);
            r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0");
            JavaInterop.ok(r);
            System.out.println("      find-hanging (its coordinator still holds the transaction open, so not listed): "
                    + JavaInterop.table(r.out(), "Topic"));

            long started = System.nanoTime();
            r = t.tool(null, TOOL, "--bootstrap-server", t.bootstrap, "abort", "--topic", topic, "--partition", "0",
                    "--start-offset", Long.toString(first));
            JavaInterop.ok(r);
            System.out.printf("      kafka-transactions abort of producer %s epoch %s at offset %d: %d ms%n",
                    open.get("ProducerId"), open.get("ProducerEpoch"), first, (System.nanoTime() - started) / 1_000_000);

            Map<TopicPartition, Long> end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS)
                    .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
            lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new org.apache.kafka.clients.admin.ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED))
                    .all().get(30, TimeUnit.SECONDS).entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
            // The three records and the abort marker.
            expectEqual(first + 4, end.get(tp), "end offset after the abort");
            expectEqual(end.get(tp), lso.get(tp), "last stable offset after the abort");
            expectEqual(List.of("before"), read(List.of(tp), "read_committed"), "read_committed after the abort");
            List<ProducerState> ps = admin.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS).activeProducers();
            expect(ps.stream().noneMatch(s -> s.currentTransactionStartOffset().isPresent()), "producers of %s after the abort: %s", tp, ps);
            System.out.printf("      the abort check took %d ms%n", (System.nanoTime() - checkStarted) / 1_000_000);
        });
    }

    // --- the transaction timeout --------------------------------------------------------------

    private void timeout(Admin admin) {
        String topic = "txn-timeout";
        String id = "java-timeout";
        int timeoutMs = 3000;
        TopicPartition tp = new TopicPartition(topic, 0);
        t.check("a transaction left open past transaction.timeout.ms=" + timeoutMs + " is aborted within 1 s after its deadline, "
                + "not before; read_committed never sees it; the producer's commit then fails", () -> {
            JavaInterop.createTopic(admin, topic, 1);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(txProps(id, timeoutMs))) {
                p.initTransactions();
                p.beginTransaction();
                send(p, topic, 1, List.of("timed-out"));
                TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                expectEqual("ONGOING", d.state().name(), "state after the send");
                long start = d.transactionStartTimeMs().orElseThrow();
                long deadline = start + timeoutMs;
                long seenAt;
                String state;
                long give = System.currentTimeMillis() + timeoutMs + WAIT.toMillis();
                while (true) {
                    d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
                    seenAt = System.currentTimeMillis();
                    state = d.state().name();
                    if (!state.equals("ONGOING")) {
                        break;
                    }
                    expect(seenAt < give, "still ONGOING %d ms after its deadline", seenAt - deadline);
                    Thread.sleep(20); // the describe's pace, not a wait for anything
                }
                long late = seenAt - deadline;
                System.out.printf("      transaction timeout %d ms: seen %s %d ms after the deadline (start %d, epoch %d)%n",
                        timeoutMs, state, late, start, d.producerEpoch());
                expect(state.equals("PREPARE_ABORT") || state.equals("COMPLETE_ABORT"), "state %s, want an abort", state);
                expect(late >= 0, "aborted %d ms before its deadline", -late);
                expect(late < 1000, "aborted %d ms after its deadline", late);
                try {
                    p.commitTransaction();
                    throw new AssertionError("the commit of a timed-out transaction returned");
                } catch (KafkaException e) {
                    System.out.println("      the commit after the timeout: " + e);
                }
            }
            expectEqual(List.of(), read(List.of(tp), "read_committed"), "read_committed");
            expectEqual(List.of("timed-out"), read(List.of(tp), "read_uncommitted"), "read_uncommitted");
        });
    }
}
