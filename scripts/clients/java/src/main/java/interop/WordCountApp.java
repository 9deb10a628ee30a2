package interop;

import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;

/**
 * The word count of {@link StreamsChecks} as an application of its own, in a JVM that
 * {@link EosChecks} starts and kills with SIGKILL. Arguments: BOOTSTRAP APPLICATION-ID INPUT
 * OUTPUT STATE-DIR GUARANTEE. It prints each state of the application as it enters it
 * ({@code RUNNING}, {@code REBALANCING}, {@code ERROR}, ...), and {@code uncaught: EXCEPTION}
 * for an exception that ends a stream thread (which then shuts the application down, as
 * Streams' default handler does), and runs until it is killed or its standard input closes.
 */
public final class WordCountApp {
    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[5]);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        // Every update to the store is written out, so each word's counts in the output are
        // 1, 2, ... n: a count written twice shows.
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        // A static member: the application started again after a SIGKILL takes its place at once.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), args[1] + "-instance");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "500");
        KafkaStreams streams = new KafkaStreams(StreamsChecks.topology(args[2], args[3]), p);
        streams.setStateListener((now, before) -> {
            System.out.println(now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("uncaught: " + e);
            System.out.flush();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        while (System.in.read() >= 0) {
            // runs until stdin closes
        }
        streams.close();
    }
}
