package interop;

import static interop.JavaInterop.WAIT;
import static interop.JavaInterop.expect;
import static interop.JavaInterop.expectEqual;
import static interop.JavaInterop.waitFor;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Kafka Connect against the gateway, each worker a JVM of its own as connect-standalone.sh and
 * connect-distributed.sh run it: a standalone worker moves a file through FileStreamSource and
 * FileStreamSink; a distributed worker creates its config, offset and status topics
 * (compacted) through the gateway, takes the same two connectors through its REST API, and
 * moves a file too. The sink's file must equal the source's, line for line.
 */
final class ConnectChecks {
    private static final int LINES = 2000;

    private final JavaInterop t;
    private final Map<Process, Thread> hooks = new java.util.HashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ConnectChecks(JavaInterop t) {
        this.t = t;
    }

    void run(Admin admin) throws Exception {
        Path dir = Files.createTempDirectory("connect");
        try {
            standalone(admin, dir.resolve("standalone"));
            distributed(admin, dir.resolve("distributed"));
        } finally {
            JavaInterop.removeUnlessKept(dir);
        }
    }

    private void standalone(Admin admin, Path dir) throws Exception {
        Files.createDirectories(dir);
        String topic = "connect-standalone";
        Path in = dir.resolve("in.txt");
        Path out = dir.resolve("out.txt");
        Path log = dir.resolve("worker.log");
        int port = freePort();
        Map<String, String> worker = workerProps(port);
        worker.put("offset.storage.file.filename", dir.resolve("offsets").toString());
        Path workerFile = write(dir.resolve("worker.properties"), worker);
        Path source = write(dir.resolve("source.properties"), sourceProps("file-source", in, topic));
        Path sink = write(dir.resolve("sink.properties"), sinkProps("file-sink", out, topic));
        JavaInterop.createTopic(admin, topic, 1);
        String text = lines("standalone");
        Files.writeString(in, text);
        Process p = start(log, "org.apache.kafka.connect.cli.ConnectStandalone", workerFile.toString(), source.toString(), sink.toString());
        try {
            t.check("connect: a standalone worker moves a file through FileStreamSource and FileStreamSink", () -> {
                sameFile(p, log, port, in, out);
            });
        } finally {
            stop(p);
        }
    }

    private void distributed(Admin admin, Path dir) throws Exception {
        Files.createDirectories(dir);
        String topic = "connect-distributed";
        String prefix = "java-connect-";
        Path in = dir.resolve("in.txt");
        Path out = dir.resolve("out.txt");
        Path log = dir.resolve("worker.log");
        int port = freePort();
        Map<String, String> worker = workerProps(port);
        worker.put("group.id", prefix + "cluster");
        for (String kind : List.of("config", "offset", "status")) {
            worker.put(kind + ".storage.topic", prefix + kind);
            worker.put(kind + ".storage.replication.factor", "-1");
        }
        worker.put("offset.storage.partitions", "3");
        worker.put("status.storage.partitions", "3");
        worker.put("scheduled.rebalance.max.delay.ms", "0");
        Path workerFile = write(dir.resolve("worker.properties"), worker);
        JavaInterop.createTopic(admin, topic, 1);
        String text = lines("distributed");
        Files.writeString(in, text);
        Process p = start(log, "org.apache.kafka.connect.cli.ConnectDistributed", workerFile.toString());
        try {
            t.check("connect: a distributed worker starts, its config, offset and status topics created compacted through the gateway", () -> {
                // GET /health answers 200 once the worker has started: its topics created and
                // read, its group joined (GET /connectors answers earlier, from a snapshot).
                waitFor("the worker healthy: GET /health on 127.0.0.1:" + port + " answering 200 (worker " + (p.isAlive() ? "running" : "exited")
                        + ")\n" + tail(log), Duration.ofSeconds(90), () -> p.isAlive() && get(port, "/health") != null);
                expectEqual("[]", get(port, "/connectors"), "GET /connectors");
                List<ConfigResource> rs = new ArrayList<>();
                for (String kind : List.of("config", "offset", "status")) {
                    rs.add(new ConfigResource(ConfigResource.Type.TOPIC, prefix + kind));
                }
                var cs = admin.describeConfigs(rs).values();
                for (ConfigResource r : rs) {
                    Config c;
                    try {
                        c = cs.get(r).get(30, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new AssertionError("describeConfigs of " + r.name() + ": " + e.getCause());
                    }
                    expectEqual("compact", c.get("cleanup.policy").value(), r.name() + " cleanup.policy");
                }
            });
            t.check("connect: the distributed worker takes FileStreamSource and FileStreamSink through its REST API and moves a file", () -> {
                for (Map<String, String> c : List.of(sourceProps("dist-source", in, topic), sinkProps("dist-sink", out, topic))) {
                    String name = c.remove("name");
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(url(port, "/connectors/" + name + "/config"))
                            .header("Content-Type", "application/json").timeout(WAIT)
                            .PUT(HttpRequest.BodyPublishers.ofString(json(c))).build(), HttpResponse.BodyHandlers.ofString());
                    expect(r.statusCode() == 201, "PUT /connectors/%s/config: %d %s", name, r.statusCode(), r.body());
                }
                sameFile(p, log, port, in, out);
                for (String name : List.of("dist-source", "dist-sink")) {
                    String status = get(port, "/connectors/" + name + "/status");
                    expect(status != null && status.contains("\"connector\":{\"state\":\"RUNNING\"") && status.contains("\"tasks\":[{\"id\":0,\"state\":\"RUNNING\""),
                            "%s not RUNNING with its task: %s", name, status);
                }
            });
        } finally {
            stop(p);
        }
    }

    /** The settings both workers share: String converters, a REST listener on {@code port}. */
    private Map<String, String> workerProps(int port) {
        Map<String, String> w = new LinkedHashMap<>();
        w.put("bootstrap.servers", t.bootstrap);
        w.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("listeners", "http://127.0.0.1:" + port);
        w.put("rest.advertised.host.name", "127.0.0.1");
        w.put("offset.flush.interval.ms", "1000");
        // The connectors are found by their service files, without scanning every jar.
        w.put("plugin.discovery", "service_load");
        return w;
    }

    private static Map<String, String> sourceProps(String name, Path file, String topic) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("name", name);
        c.put("connector.class", "org.apache.kafka.connect.file.FileStreamSourceConnector");
        c.put("tasks.max", "1");
        c.put("file", file.toString());
        c.put("topic", topic);
        return c;
    }

    private static Map<String, String> sinkProps(String name, Path file, String topic) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("name", name);
        c.put("connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector");
        c.put("tasks.max", "1");
        c.put("file", file.toString());
        c.put("topics", topic);
        return c;
    }

    private static String lines(String what) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < LINES; i++) {
            b.append(what).append(" line ").append(i).append(": ").append("x".repeat(i % 50)).append('\n');
        }
        return b.toString();
    }

    /** Waits until the sink's file holds what the source's does, while the worker runs. */
    private void sameFile(Process p, Path log, int port, Path in, Path out) throws Exception {
        String want = Files.readString(in);
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        String got = "";
        while (!got.equals(want)) {
            expect(p.isAlive(), "the worker exited with status %d\n%s", p.isAlive() ? 0 : p.exitValue(), tail(log));
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 90 s: " + out + " holds " + got.lines().count() + " of " + LINES
                        + " lines (the first differing: " + firstDifference(want, got) + ")\nconnectors: " + get(port, "/connectors?expand=status")
                        + "\n" + tail(log));
            }
            got = Files.exists(out) ? Files.readString(out) : "";
            if (!want.startsWith(got)) {
                throw new AssertionError(out + " is not a prefix of " + in + ": " + firstDifference(want, got));
            }
            Thread.sleep(100);
        }
    }

    private static String firstDifference(String want, String got) {
        List<String> w = want.lines().collect(Collectors.toList());
        List<String> g = got.lines().collect(Collectors.toList());
        for (int i = 0; i < Math.min(w.size(), g.size()); i++) {
            if (!w.get(i).equals(g.get(i))) {
                return "line " + (i + 1) + ": want " + w.get(i) + ", got " + g.get(i);
            }
        }
        return g.size() < w.size() ? "line " + (g.size() + 1) + " missing" : "none";
    }

    /** Starts a worker's main class as the connect-*.sh scripts do, its output in {@code log}. */
    private Process start(Path log, String mainClass, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", t.connectClasspath, mainClass));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // A worker does not outlive the checks, also when they are stopped (timeout in the script).
        Thread hook = new Thread(p::destroyForcibly);
        Runtime.getRuntime().addShutdownHook(hook);
        hooks.put(p, hook);
        return p;
    }

    private void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        Runtime.getRuntime().removeShutdownHook(hooks.remove(p));
    }

    /** The body of GET {@code path} when it answers 200, else null (not up yet). */
    private String get(int port, String path) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(url(port, path)).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static URI url(int port, String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static String json(Map<String, String> m) {
        return m.entrySet().stream()
                .map(e -> "\"" + e.getKey() + "\":\"" + e.getValue().replace("\\", "\\\\").replace("\"", "\\\"") + "\"")
                .collect(Collectors.joining(",", "{", "}"));
    }

    private static Path write(Path file, Map<String, String> props) throws IOException {
        StringBuilder b = new StringBuilder();
        props.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
        return file;
    }

    private static String tail(Path log) {
        try {
            List<String> ls = Files.readAllLines(log);
            return "worker output (last 20 lines):\n" + String.join("\n", ls.subList(Math.max(0, ls.size() - 20), ls.size()));
        } catch (IOException e) {
            return "no worker output: " + e;
        }
    }

    /** A port free on the loopback now, for a worker's REST listener. */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
