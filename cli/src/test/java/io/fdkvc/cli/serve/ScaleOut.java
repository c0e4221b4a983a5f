package io.fdkvc.cli.serve;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The parts of a scale-out deployment as real processes on free loopback ports, each with its own
 * directory, for the tests: Debian's {@code redis-server}, {@code fdkvc serve} replicas (this
 * JVM's class path, stories260K from ../shared) and {@code haproxy} with the shipped
 * {@code deploy/haproxy.cfg}.
 */
final class ScaleOut {
    private ScaleOut() {}

    static final Path MODEL = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
    static final Path HAPROXY_CFG = Path.of("..", "deploy", "haproxy.cfg");

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static void awaitPort(Process p, int port, Path log, String what) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            if (!p.isAlive()) throw new IllegalStateException(what + " ended: " + Files.readString(log));
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) throw new IllegalStateException(what + " is not listening on " + port);
                Thread.sleep(20);
            }
        }
    }

    static void signal(Process p, String sig) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start().waitFor() != 0) {
            throw new IllegalStateException("kill -" + sig + " " + p.pid() + " failed");
        }
    }

    /** A process stopped with SIGKILL when closed. */
    abstract static class Child implements AutoCloseable {
        final Path dir;
        final int port;
        Process process;

        Child(Path dir) throws IOException {
            this.dir = Files.createDirectories(dir);
            this.port = freePort();
        }

        abstract void start() throws IOException, InterruptedException;

        /** The HTTP address of what listens on {@link #port} (a replica, the balancer). */
        String base() {
            return "http://127.0.0.1:" + port;
        }

        void kill() throws InterruptedException {
            if (process != null) {
                process.destroyForcibly(); // SIGKILL
                process.waitFor();
            }
        }

        @Override
        public void close() throws InterruptedException {
            kill();
        }
    }

    /** redis-server with an append-only file synced at every write. */
    static final class Redis extends Child {
        Redis(Path dir) throws IOException, InterruptedException {
            super(dir);
            start();
        }

        String url() {
            return "redis://127.0.0.1:" + port;
        }

        @Override
        void start() throws IOException, InterruptedException {
            Path log = dir.resolve("redis.out");
            process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(),
                    "--appendonly", "yes", "--appendfsync", "always", "--save", "").redirectErrorStream(true).redirectOutput(log.toFile()).start();
            awaitPort(process, port, log, "redis-server");
        }
    }

    /** {@code fdkvc serve} in its own JVM; {@code store} null: no session store (the uninterrupted reference). */
    static final class Replica extends Child {
        final String store;
        final List<String> extra;

        Replica(Path dir, String store, String... extra) throws IOException, InterruptedException {
            super(dir);
            this.store = store;
            this.extra = List.of(extra);
            start();
        }

        @Override
        void start() throws IOException, InterruptedException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp",
                    System.getProperty("java.class.path"), "io.fdkvc.cli.Main", "serve", "--model", MODEL.toString(), "--port",
                    Integer.toString(port), "--policy", "fdkvc", "--budget", "40", "--max-turn-tokens", "16", "--threads", "1", "--warmup", "0",
                    "--temperature", "0"));
            if (store != null) cmd.addAll(List.of("--session-store", store));
            cmd.addAll(extra);
            Path log = dir.resolve("serve.log");
            process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(log).contains("fdkvc serve: ready:")) {
                if (!process.isAlive()) throw new IllegalStateException("fdkvc serve ended: " + Files.readString(log));
                if (System.nanoTime() > deadline) throw new IllegalStateException("fdkvc serve not ready: " + Files.readString(log));
                Thread.sleep(50);
            }
        }
    }

    /** haproxy -db with deploy/haproxy.cfg, its addresses given through the environment the file reads. */
    static final class Balancer extends Child {
        final Replica[] replicas;
        final int statsPort;

        Balancer(Path dir, Replica... replicas) throws IOException, InterruptedException {
            super(dir);
            this.replicas = replicas;
            this.statsPort = freePort();
            start();
        }

        @Override
        void start() throws IOException, InterruptedException {
            Path log = dir.resolve("haproxy.out");
            ProcessBuilder pb = new ProcessBuilder("haproxy", "-db", "-f", HAPROXY_CFG.toString()).redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            pb.environment().put("FDKVC_LB_BIND", "127.0.0.1:" + port);
            pb.environment().put("FDKVC_LB_STATS", "127.0.0.1:" + statsPort);
            for (int i = 0; i < replicas.length; i++) pb.environment().put("FDKVC_REPLICA" + (i + 1), "127.0.0.1:" + replicas[i].port);
            process = pb.start();
            awaitPort(process, port, log, "haproxy");
            awaitUp(replicas.length);
        }

        /** Waits until HAProxy's health checks count {@code n} replicas up. */
        void awaitUp(int n) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                int up = 0;
                for (String line : stats().split("\n")) {
                    if (line.startsWith("replicas,replica") && line.split(",")[17].equals("UP")) up++;
                }
                if (up == n) return;
                if (System.nanoTime() > deadline) throw new IllegalStateException("HAProxy sees " + up + " replicas up, not " + n + ":\n" + stats());
                Thread.sleep(100);
            }
        }

        String stats() throws IOException, InterruptedException {
            try (HttpClient c = HttpClient.newHttpClient()) {
                return c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + statsPort + "/stats;csv")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
            }
        }
    }

    /** Reads a streamed reply line by line. */
    static BufferedReader lines(HttpResponse<java.io.InputStream> r) {
        return new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
    }

    static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }
}
