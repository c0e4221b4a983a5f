package io.fdkvc.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code redis-server} for the tests: on a free loopback port, with its own data
 * directory, an append-only file synced at every write (so a killed Redis loses no acknowledged
 * write), started and stopped by the test. With certificates it listens for TLS only on that
 * port; {@code extra} are further configuration directives (ACL users).
 */
final class RedisServer implements AutoCloseable {
    final Path dir;
    final int port;
    private final TestCertificates tls;
    private final List<String> extra;
    private Process process;

    RedisServer(Path dir) throws IOException, InterruptedException {
        this(dir, null, List.of());
    }

    RedisServer(Path dir, TestCertificates tls, List<String> extra) throws IOException, InterruptedException {
        this.dir = Files.createDirectories(dir);
        this.port = freePort();
        this.tls = tls;
        this.extra = List.copyOf(extra);
        start();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    String url() {
        return (tls == null ? "redis" : "rediss") + "://127.0.0.1:" + port;
    }

    /** Starts it (again, on the same port and data) and waits until it answers. */
    void start() throws IOException, InterruptedException {
        Path log = dir.resolve("redis.log");
        long logged = Files.exists(log) ? Files.size(log) : 0;
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--bind", "127.0.0.1", "--dir", dir.toString(), "--appendonly", "yes",
                "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", log.toString()));
        if (tls == null) {
            cmd.addAll(List.of("--port", Integer.toString(port)));
        } else {
            cmd.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port), "--tls-cert-file", tls.cert().toString(), "--tls-key-file",
                    tls.key().toString(), "--tls-ca-cert-file", tls.ca().toString(), "--tls-auth-clients", "no"));
        }
        cmd.addAll(extra);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("redis.out").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!process.isAlive()) throw new IllegalStateException("redis-server ended: " + Files.readString(dir.resolve("redis.out"))
                    + (Files.exists(log) ? Files.readString(log) : ""));
            // ready once this start has logged so (its own part of the log: a restart appends)
            if (Files.exists(log) && Files.size(log) > logged) {
                byte[] all = Files.readAllBytes(log);
                if (new String(all, (int) logged, all.length - (int) logged, java.nio.charset.StandardCharsets.UTF_8)
                        .contains("Ready to accept connections")) return;
            }
            if (System.nanoTime() > deadline) throw new IllegalStateException("redis-server did not get ready on port " + port);
            Thread.sleep(20);
        }
    }

    /** SIGKILL: nothing is flushed beyond what it had synced. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) kill();
    }
}
