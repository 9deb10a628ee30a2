package interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The members of one consumer group, at the Java client's default settings, for the fleet tests'
 * SIGKILL measurement (gateway/fleettest, sigkill_test.go), which starts this program as a child
 * process and reads what the members do from its standard output, one event a line:
 *
 * <pre>
 * R member partition offset value     a record delivered to the member
 * C member partition offset           a commit of offset (the next to read) that succeeded
 * A member p,p,...                    partitions assigned
 * V member p,p,...                    partitions revoked
 * L member p,p,...                    partitions lost
 * G member generation                 the member's generation (its member epoch under KIP-848) changed
 * E member message                    an error the member went on after
 * </pre>
 *
 * Each member polls, then commits what the poll returned, synchronously. The program ends, its
 * members leaving the group, when its standard input closes.
 *
 * Usage: GroupMembers BOOTSTRAP GROUP TOPIC classic|consumer MEMBERS
 */
public final class GroupMembers {
    private static final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private static synchronized void emit(String line) {
        out.println(line);
        out.flush();
    }

    private static String parts(Collection<TopicPartition> ps) {
        return ps.stream().map(tp -> Integer.toString(tp.partition())).sorted().collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: GroupMembers BOOTSTRAP GROUP TOPIC classic|consumer MEMBERS");
            System.exit(2);
        }
        String bootstrap = args[0], group = args[1], topic = args[2], protocol = args[3];
        int members = Integer.parseInt(args[4]);
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            String name = "member-" + i;
            Thread th = new Thread(() -> runMember(bootstrap, group, topic, protocol, name, stop), name);
            th.start();
            threads.add(th);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            while (in.readLine() != null) {
                // Nothing is asked on standard input; its end is the signal to stop.
            }
        } catch (IOException e) {
            // The parent is gone: stop as on a closed input.
        }
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
    }

    private static void runMember(String bootstrap, String group, String topic, String protocol, String name, AtomicBoolean stop) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, group + "-" + name);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                    if (!ps.isEmpty()) {
                        emit("V " + name + " " + parts(ps));
                    }
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                    if (!ps.isEmpty()) {
                        emit("A " + name + " " + parts(ps));
                    }
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> ps) {
                    if (!ps.isEmpty()) {
                        emit("L " + name + " " + parts(ps));
                    }
                }
            });
            int generation = -1;
            while (!stop.get()) {
                ConsumerRecords<String, String> recs;
                try {
                    recs = c.poll(Duration.ofMillis(100));
                } catch (RuntimeException e) {
                    emit("E " + name + " poll: " + e);
                    continue;
                }
                int g = c.groupMetadata().generationId();
                if (g != generation) {
                    generation = g;
                    emit("G " + name + " " + g);
                }
                if (recs.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<String, String> r : recs) {
                    emit("R " + name + " " + r.partition() + " " + r.offset() + " " + r.value());
                    next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                try {
                    c.commitSync(next);
                    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : next.entrySet()) {
                        emit("C " + name + " " + e.getKey().partition() + " " + e.getValue().offset());
                    }
                } catch (RuntimeException e) {
                    emit("E " + name + " commit: " + e);
                }
            }
        } catch (RuntimeException e) {
            emit("E " + name + " " + e);
        }
    }
}
